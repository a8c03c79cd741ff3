use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::monitor::listener::{Admission, OpenConnections};

const HEAD: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: k3sdoctor\r\n\r\n";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn admitted(open: &mut OpenConnections) -> Arc<Connection> {
    match open.admit(std::time::Instant::now()) {
        Admission::Serve(connection) => connection,
        Admission::Full => panic!("full"),
    }
}

/// A loopback pair: the client's blocking socket and serve's accepted one.
async fn pair() -> (std::net::TcpStream, TcpStream) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (served, _) = listener.accept().await.unwrap();
    (client, served)
}

#[test]
fn a_head_ends_at_its_blank_line() {
    assert!(head_complete(HEAD));
    assert!(head_complete(b"GET / HTTP/1.1\nHost: x\n\n"));
    assert!(!head_complete(
        b"GET /metrics HTTP/1.1\r\nHost: k3sdoctor\r\n"
    ));
    assert!(!head_complete(b"GET /metrics HTTP/1.1\r\nUser-Agent: slow"));
}

#[test]
fn a_head_sent_in_pieces_is_handed_on_whole_with_what_followed() {
    runtime().block_on(async {
        let (mut client, served) = pair().await;
        let mut open = OpenConnections::new(4);
        let connection = admitted(&mut open);
        let sent = [HEAD, b"GET /healthz HTTP/1.1\r\n"].concat();
        let writer = std::thread::spawn(move || {
            for piece in sent.chunks(7) {
                client.write_all(piece).unwrap();
                std::thread::sleep(Duration::from_millis(2));
            }
            client
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let Waited::Head(head) = wait_for_head(&served, &connection, deadline).await else {
            panic!("the head did not arrive");
        };
        assert!(head.starts_with(HEAD), "{head:?}");
        drop(writer.join());
    });
}

#[test]
fn a_client_that_stops_mid_head_or_goes_is_let_go() {
    runtime().block_on(async {
        let mut open = OpenConnections::new(4);
        let (mut stalled, served) = pair().await;
        stalled
            .write_all(b"GET /metrics HTTP/1.1\r\nUser-Agent: slow")
            .unwrap();
        let connection = admitted(&mut open);
        let deadline = Instant::now() + Duration::from_millis(50);
        let waited = wait_for_head(&served, &connection, deadline).await;
        assert!(matches!(waited, Waited::Gone), "{waited:?}");

        let (mut gone, served) = pair().await;
        gone.write_all(b"GET /metr").unwrap();
        drop(gone);
        let connection = admitted(&mut open);
        let deadline = Instant::now() + Duration::from_secs(30);
        let waited = wait_for_head(&served, &connection, deadline).await;
        assert!(matches!(waited, Waited::Gone), "{waited:?}");
    });
}

#[test]
fn asked_to_make_room_a_connection_keeps_a_head_that_has_arrived_and_drops_a_partial_one() {
    runtime().block_on(async {
        let mut open = OpenConnections::new(1);
        let deadline = Instant::now() + Duration::from_secs(30);

        // The head is in the socket, but this task has not read it yet.
        let (mut scraper, served) = pair().await;
        let connection = admitted(&mut open);
        scraper.write_all(HEAD).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let _newcomer = admitted(&mut open);
        let waited = wait_for_head(&served, &connection, deadline).await;
        assert!(
            matches!(&waited, Waited::Head(h) if h == HEAD),
            "{waited:?}"
        );

        let mut open = OpenConnections::new(1);
        let (mut slow, served) = pair().await;
        let connection = admitted(&mut open);
        slow.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let _newcomer = admitted(&mut open);
        let waited = wait_for_head(&served, &connection, deadline).await;
        assert!(matches!(waited, Waited::Gone), "{waited:?}");
    });
}
