//! A forward proxy on loopback that speaks both HTTP `CONNECT` (RFC 9110 §9.3.6) and SOCKS5
//! (RFC 1928, no authentication, CONNECT only), as squid or a corporate SOCKS gateway would
//! to kubectl. It records every target it was asked for, so a test can tell that the binary
//! went through it (or did not). Names ending in `.test` (RFC 2606: never in real DNS) are
//! resolved by the proxy to 127.0.0.1, as a real proxy resolves names its clients cannot.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

pub(crate) struct ForwardProxy {
    port: u16,
    targets: Arc<Mutex<Vec<String>>>,
}

impl ForwardProxy {
    pub(crate) fn start() -> ForwardProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let port = listener.local_addr().expect("proxy addr").port();
        let targets = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&targets);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let seen = Arc::clone(&seen);
                std::thread::spawn(move || {
                    let _ = serve(client, &seen);
                });
            }
        });
        ForwardProxy { port, targets }
    }

    /// `http://127.0.0.1:<port>`.
    pub(crate) fn http_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `socks5://127.0.0.1:<port>`.
    pub(crate) fn socks5_url(&self) -> String {
        format!("socks5://127.0.0.1:{}", self.port)
    }

    /// Every `host:port` asked for so far, prefixed with `CONNECT ` or `SOCKS5 `.
    pub(crate) fn targets(&self) -> Vec<String> {
        self.targets.lock().unwrap().clone()
    }
}

fn serve(mut client: TcpStream, seen: &Mutex<Vec<String>>) -> std::io::Result<()> {
    let mut first = [0u8; 1];
    client.read_exact(&mut first)?;
    let target = if first[0] == 5 {
        socks5_handshake(&mut client, seen)?
    } else {
        connect_request(&mut client, first[0], seen)?
    };
    let Some((upstream, reply)) = target else {
        return Ok(());
    };
    client.write_all(&reply)?;
    pump(client, upstream)
}

type Tunnel = Option<(TcpStream, Vec<u8>)>;

fn dial(host: &str, port: u16) -> std::io::Result<TcpStream> {
    let host = if host.ends_with(".test") {
        "127.0.0.1"
    } else {
        host
    };
    TcpStream::connect((host, port))
}

fn connect_request(
    client: &mut TcpStream,
    first: u8,
    seen: &Mutex<Vec<String>>,
) -> std::io::Result<Tunnel> {
    let mut head = vec![first];
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
        client.read_exact(&mut byte)?;
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut words = head.split_whitespace();
    let (Some("CONNECT"), Some(authority)) = (words.next(), words.next()) else {
        client.write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")?;
        return Ok(None);
    };
    seen.lock().unwrap().push(format!("CONNECT {authority}"));
    let (host, port) = authority.rsplit_once(':').unwrap_or((authority, "443"));
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match dial(host, port.parse().unwrap_or(443)) {
        Ok(upstream) => Ok(Some((
            upstream,
            b"HTTP/1.1 200 Connection established\r\n\r\n".to_vec(),
        ))),
        Err(_) => {
            client.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")?;
            Ok(None)
        }
    }
}

fn socks5_handshake(client: &mut TcpStream, seen: &Mutex<Vec<String>>) -> std::io::Result<Tunnel> {
    let mut count = [0u8; 1];
    client.read_exact(&mut count)?;
    let mut methods = vec![0u8; count[0] as usize];
    client.read_exact(&mut methods)?;
    if !methods.contains(&0) {
        client.write_all(&[5, 0xff])?;
        return Ok(None);
    }
    client.write_all(&[5, 0])?;
    let mut request = [0u8; 4];
    client.read_exact(&mut request)?;
    let host = match request[3] {
        1 => {
            let mut ip = [0u8; 4];
            client.read_exact(&mut ip)?;
            std::net::Ipv4Addr::from(ip).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            client.read_exact(&mut len)?;
            let mut name = vec![0u8; len[0] as usize];
            client.read_exact(&mut name)?;
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut ip = [0u8; 16];
            client.read_exact(&mut ip)?;
            std::net::Ipv6Addr::from(ip).to_string()
        }
        _ => return Ok(None),
    };
    let mut port = [0u8; 2];
    client.read_exact(&mut port)?;
    let port = u16::from_be_bytes(port);
    seen.lock().unwrap().push(format!("SOCKS5 {host}:{port}"));
    // Reply: succeeded, bound to 0.0.0.0:0 (clients ignore it for CONNECT).
    let ok = vec![5, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    if request[1] != 1 {
        client.write_all(&[5, 7, 0, 1, 0, 0, 0, 0, 0, 0])?;
        return Ok(None);
    }
    match dial(&host, port) {
        Ok(upstream) => Ok(Some((upstream, ok))),
        Err(_) => {
            client.write_all(&[5, 5, 0, 1, 0, 0, 0, 0, 0, 0])?;
            Ok(None)
        }
    }
}

fn pump(client: TcpStream, upstream: TcpStream) -> std::io::Result<()> {
    let (mut client_read, mut upstream_write) = (client.try_clone()?, upstream.try_clone()?);
    let forward = std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_read, &mut upstream_write);
        let _ = upstream_write.shutdown(Shutdown::Write);
    });
    let (mut upstream_read, mut client_write) = (upstream, client);
    let _ = std::io::copy(&mut upstream_read, &mut client_write);
    let _ = client_write.shutdown(Shutdown::Write);
    let _ = forward.join();
    Ok(())
}
