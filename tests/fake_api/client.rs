//! A minimal HTTP/1.1 client over `std::net::TcpStream`: one request per connection, the raw
//! response bytes decoded (Content-Length or chunked), nothing hidden.

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// `Transfer-Encoding: chunked` was used.
    pub chunked: bool,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "response is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A request to send.
#[derive(Clone, Debug, Default)]
pub(crate) struct Req {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Req {
    pub(crate) fn new(method: &str, target: &str) -> Req {
        Req {
            method: method.to_string(),
            target: target.to_string(),
            ..Default::default()
        }
    }

    pub(crate) fn token(self, token: &str) -> Req {
        self.header("Authorization", &format!("Bearer {token}"))
    }

    pub(crate) fn header(mut self, name: &str, value: &str) -> Req {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub(crate) fn json_body(self, content_type: &str, body: impl Into<Vec<u8>>) -> Req {
        let mut req = self.header("Content-Type", content_type);
        req.body = body.into();
        req
    }
}

fn decode_chunked(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size_text = std::str::from_utf8(&data[..line_end]).expect("ascii chunk size");
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("0").trim(), 16)
            .expect("hex chunk size");
        data = &data[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

/// Send `req` and read the whole response (the request asks the server to close afterwards).
/// `Err` when the connection was closed without a complete response.
pub(crate) fn try_send(addr: SocketAddr, req: &Req) -> Result<Response, String> {
    let stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    try_send_over(stream, addr, req)
}

/// [`try_send`] over an already connected stream (e.g. TLS); `addr` is for the `Host` header.
/// A read error after some bytes arrived (a TLS peer closing without close_notify) ends the
/// response like EOF does.
pub(crate) fn try_send_over(
    mut stream: impl Read + Write,
    addr: SocketAddr,
    req: &Req,
) -> Result<Response, String> {
    let mut head = format!(
        "{} {} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n",
        req.method, req.target
    );
    if !req
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("user-agent"))
    {
        head.push_str("User-Agent: example-client/1.0\r\n");
    }
    for (k, v) in &req.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !req.body.is_empty() || matches!(req.method.as_str(), "POST" | "PUT" | "PATCH") {
        head.push_str(&format!("Content-Length: {}\r\n", req.body.len()));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&req.body);
    // The server may answer (413) and close before reading everything: ignore write errors.
    let _ = stream.write_all(&bytes);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no response ({} bytes)", raw.len()))?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("bad status line")?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        })
        .collect();
    let rest = &raw[split + 4..];
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        decode_chunked(rest)
    } else {
        rest.to_vec()
    };
    if let Some((_, len)) = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
    {
        let len: usize = len.parse().map_err(|_| "bad content-length")?;
        if len != body.len() {
            return Err(format!(
                "content-length {len} but {} body bytes",
                body.len()
            ));
        }
    }
    Ok(Response {
        status,
        headers,
        body,
        chunked,
    })
}

pub(crate) fn send(addr: SocketAddr, req: &Req) -> Response {
    try_send(addr, req).unwrap_or_else(|e| panic!("{} {}: {e}", req.method, req.target))
}
