//! What an anonymous or greedy client can make `proven serve` spend, measured on the real
//! process: no body is read before its sender is known (a token, or the webhook's
//! signature checked as the body streams within a budget), one address's half-sent
//! requests leave the others' connections free, and a tenant's questions are capped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::service::Service;

fn host_port(base_url: &str) -> String {
    base_url.trim_start_matches("http://").to_string()
}

/// The process's peak resident memory so far (`VmHWM`), in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    kb * 1024
}

/// Reads what the server says within `within` (until it closes or stops talking).
async fn answer_of(stream: &mut TcpStream, within: Duration) -> String {
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + within;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                answer.extend_from_slice(&buf[..n]);
                if answer.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

const TWO_MIB: usize = 2 * 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_unauthenticated_two_mib_webhook_bodies_keep_the_server_under_200_mb() {
    // Connection limits out of the way (per address too: every sender is 127.0.0.1), so
    // only the way bodies are read bounds what the server holds.
    let service = Service::start_api_with(&[
        ("PROVEN_GITHUB_APP_ID", "1"),
        ("PROVEN_GITHUB_WEBHOOK_SECRET", "the-webhook-secret"),
        ("PROVEN_HTTP_MAX_CONNECTIONS", "4096"),
        ("PROVEN_HTTP_MAX_CONNECTIONS_PER_ADDRESS", "4096"),
        ("PROVEN_HTTP_BODY_TIMEOUT_SECONDS", "10"),
    ])
    .await;
    let pid = service.api.0.id();
    let before = peak_rss(pid);
    let addr = host_port(&service.base_url);
    let body = Arc::new(vec![b'x'; TWO_MIB]);
    let mut senders = tokio::task::JoinSet::new();
    for i in 0..1000 {
        let (addr, body) = (addr.clone(), body.clone());
        senders.spawn(async move {
            let Ok(mut s) = TcpStream::connect(&addr).await else {
                return "refused".to_string();
            };
            // A well-formed signature that does not hold: the server must read the body
            // to find out.
            let head = format!(
                "POST /v1/github/webhook HTTP/1.1\r\nHost: {addr}\r\nX-GitHub-Event: ping\r\n\
                 X-GitHub-Delivery: d{i}\r\nX-Hub-Signature-256: sha256={}\r\n\
                 Content-Type: application/json\r\nContent-Length: {TWO_MIB}\r\n\r\n",
                "0".repeat(64)
            );
            if s.write_all(head.as_bytes()).await.is_err() {
                return "closed".to_string();
            }
            // The server may answer (and close) before the whole body is in.
            let _ = s.write_all(&body).await;
            let answer = answer_of(&mut s, Duration::from_secs(30)).await;
            answer.lines().next().unwrap_or("closed").to_string()
        });
    }
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    while let Some(done) = senders.join_next().await {
        *statuses.entry(done.expect("sender")).or_default() += 1;
    }
    let peak = peak_rss(pid);
    eprintln!(
        "webhook flood: peak RSS {:.1} MB (before {:.1} MB); answers {statuses:?}",
        peak as f64 / 1e6,
        before as f64 / 1e6
    );
    assert!(
        statuses.keys().all(|s| !s.contains(" 2")),
        "no unsigned delivery is accepted: {statuses:?}"
    );
    assert!(
        statuses.keys().any(|s| s.contains(" 401 ")),
        "bodies were read and their signature refused: {statuses:?}"
    );
    assert!(
        peak < 200_000_000,
        "the server's peak memory was {peak} bytes, over 200 MB"
    );
    // And it still serves.
    let r = crate::service::http()
        .get(format!("{}/healthz", service.base_url))
        .send()
        .await
        .expect("healthz");
    assert_eq!(r.status(), 200);
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_half_open_connections_from_one_address_leave_healthz_fast_for_another() {
    // The default limits: 1,024 connections in all.
    let service = Service::start_api_with(&[]).await;
    let addr = host_port(&service.base_url);
    let mut held = Vec::new();
    for _ in 0..1024 {
        let mut s = TcpStream::connect(&addr).await.expect("connect");
        // Half the headers, then nothing.
        let _ = s
            .write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
            .await;
        held.push(s);
    }
    // Let the server accept them all.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let server: std::net::SocketAddr = addr.parse().expect("the server's address");
    let mut took = Vec::new();
    for _ in 0..10 {
        // Another client: another loopback address.
        let socket = TcpSocket::new_v4().expect("socket");
        socket
            .bind("127.0.0.2:0".parse().expect("addr"))
            .expect("bind 127.0.0.2");
        let started = Instant::now();
        let mut s = socket.connect(server).await.expect("connect");
        s.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
            .await
            .expect("write");
        let answer = answer_of(&mut s, Duration::from_secs(20)).await;
        took.push(started.elapsed());
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    }
    took.sort();
    eprintln!("healthz beside 1,024 half-open connections: {took:?}");
    // Every probe: without the per-address limit most are still served at once (the
    // half-open connections wait in the backlog) and one waits out the header timeout.
    assert!(
        took.iter().all(|t| *t < Duration::from_millis(100)),
        "another client's /healthz took {took:?} (each must answer in under 100 ms)"
    );
    drop(held);
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_body_is_read_before_the_token_or_the_signature_header_is_checked() {
    let service = Service::start_api_with(&[
        ("PROVEN_GITHUB_APP_ID", "1"),
        ("PROVEN_GITHUB_WEBHOOK_SECRET", "the-webhook-secret"),
        ("PROVEN_HTTP_BODY_TIMEOUT_SECONDS", "20"),
    ])
    .await;
    let addr = host_port(&service.base_url);
    // Each request announces a body and sends none: the answer comes before any of it
    // (reading it would wait for the body timeout and answer 408).
    for (head, expected) in [
        (
            "POST /v1/reviews HTTP/1.1\r\nContent-Type: application/json\r\n",
            "missing_token",
        ),
        (
            "POST /v1/questions HTTP/1.1\r\nAuthorization: Bearer pvn_wrong\r\n",
            "invalid_token",
        ),
        (
            "POST /v1/github/webhook HTTP/1.1\r\nX-GitHub-Event: ping\r\n",
            "unsigned",
        ),
        (
            "POST /v1/github/webhook HTTP/1.1\r\nX-Hub-Signature-256: sha1=00\r\n",
            "bad_signature",
        ),
    ] {
        let mut s = TcpStream::connect(&addr).await.expect("connect");
        let started = Instant::now();
        s.write_all(format!("{head}Host: {addr}\r\nContent-Length: 2097152\r\n\r\n").as_bytes())
            .await
            .expect("write");
        let answer = answer_of(&mut s, Duration::from_secs(10)).await;
        assert!(
            answer.starts_with("HTTP/1.1 401") && started.elapsed() < Duration::from_secs(5),
            "{head:?} answered {answer:?} after {:?}",
            started.elapsed()
        );
        let body = answer_of(&mut s, Duration::from_secs(2)).await;
        assert!(
            answer.contains(expected) || body.contains(expected),
            "{answer}{body}"
        );
    }
    // An anonymous request elsewhere may carry a few KiB at most: 413 at once.
    let mut s = TcpStream::connect(&addr).await.expect("connect");
    s.write_all(
        format!(
            "POST /ui/login HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Content-Length: 2097152\r\n\r\n"
        )
        .as_bytes(),
    )
    .await
    .expect("write");
    let answer = answer_of(&mut s, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer:?}");
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_questions_over_its_cap_are_refused_with_429_by_name() {
    let service = Service::start_api_with(&[("PROVEN_MAX_QUEUED_QUESTIONS", "2")]).await;
    let client = crate::service::http();
    let busy = service.tenant("curious");
    let other = service.tenant("calm");
    let repo = tempfile::tempdir().expect("tempdir");
    let question = serde_json::json!({
        "repository": repo.path().display().to_string(),
        "question": "Where is the timeout set?",
    });
    let ask = |token: &str| {
        client
            .post(format!("{}/v1/questions", service.base_url))
            .bearer_auth(token)
            .json(&question)
            .send()
    };
    // No worker runs: each question stays queued.
    for _ in 0..2 {
        assert_eq!(ask(&busy).await.expect("post").status(), 202);
    }
    let refused = ask(&busy).await.expect("post");
    assert_eq!(refused.status(), 429);
    let body: serde_json::Value = refused.json().await.expect("a JSON error");
    assert_eq!(body["error"]["code"], "queue_full", "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("2 unanswered questions")
            && message.contains("cap of 2")
            && message.contains("PROVEN_MAX_QUEUED_QUESTIONS"),
        "{message}"
    );
    // The cap is the tenant's own.
    assert_eq!(ask(&other).await.expect("post").status(), 202);
    service.stop().await;
}
