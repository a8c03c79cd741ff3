//! The HTTP side of `serve`: `/metrics`, `/healthz`, `/readyz`, `/report`. Plain HTTP/1.1
//! (a Service scraped inside the cluster); every answer is built from what the watch loop
//! last published, so a scrape never waits for the API server.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::Exporter;
use super::metrics::CONTENT_TYPE;

const TEXT: &str = "text/plain; charset=utf-8";

/// Accepts connections until the task is dropped; each connection is served on its own task.
pub async fn serve(listener: TcpListener, exporter: Arc<Exporter>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors and the like: the next accept may succeed.
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            continue;
        };
        let exporter = exporter.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let answer = answer(&request, &exporter);
                async move { Ok::<_, Infallible>(answer) }
            });
            // A client that goes away mid-answer is its own business.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn answer(request: &Request<Incoming>, exporter: &Exporter) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return reply(
            StatusCode::METHOD_NOT_ALLOWED,
            TEXT,
            "only GET and HEAD are served\n".into(),
        );
    }
    match request.uri().path() {
        "/metrics" => reply(
            StatusCode::OK,
            CONTENT_TYPE,
            exporter.metrics.encode(exporter.now()),
        ),
        "/healthz" => reply(StatusCode::OK, TEXT, "ok\n".into()),
        "/readyz" if exporter.ready() => reply(StatusCode::OK, TEXT, "ok\n".into()),
        "/readyz" => reply(
            StatusCode::SERVICE_UNAVAILABLE,
            TEXT,
            "not ready: a watch has not listed its objects yet (see k3sdoctor_watch_synced)\n"
                .into(),
        ),
        "/report" => match exporter.report() {
            Some(json) => reply(StatusCode::OK, "application/json", json),
            None => reply(
                StatusCode::SERVICE_UNAVAILABLE,
                TEXT,
                "no report yet: the watches have not listed their objects\n".into(),
            ),
        },
        _ => reply(
            StatusCode::NOT_FOUND,
            TEXT,
            "not found; try /metrics, /healthz, /readyz or /report\n".into(),
        ),
    }
}

fn reply(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = header::HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}
