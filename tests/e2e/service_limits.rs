//! What no client can take from the service: `proven serve` started by the test (on a fresh
//! Postgres database and a Redis prefix of its own) with small limits, then pushed past
//! each: header and body time, body size, request rate, queued reviews, batch size,
//! deadlines, and tokens revoked or rotated.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::text;
use crate::service::{Service, proven};

fn host_port(base_url: &str) -> String {
    base_url.trim_start_matches("http://").to_string()
}

async fn error_of(response: reqwest::Response) -> (u16, serde_json::Value) {
    let status = response.status().as_u16();
    let body: serde_json::Value = response.json().await.expect("a JSON error body");
    (status, body["error"].clone())
}

/// What happened to a connection written to slowly.
struct Trickled {
    /// Lines written before the server answered or closed (all of them: neither).
    written: usize,
    /// The server closed the connection (within 5 s of its answer, if it answered).
    closed: bool,
    answer: String,
}

/// Writes `lines` one at a time, `every` apart, reading meanwhile; stops at the server's
/// answer or close.
async fn trickle(stream: &mut TcpStream, lines: &[String], every: Duration) -> Trickled {
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    let done = |written, closed, answer: &[u8]| Trickled {
        written,
        closed,
        answer: String::from_utf8_lossy(answer).into_owned(),
    };
    for (i, line) in lines.iter().enumerate() {
        if stream.write_all(line.as_bytes()).await.is_err() {
            return done(i, true, &answer);
        }
        match tokio::time::timeout(every, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return done(i + 1, true, &answer),
            Ok(Ok(n)) => {
                answer.extend_from_slice(&buf[..n]);
                // Read the rest of the answer, and see whether the close follows.
                loop {
                    match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await
                    {
                        Ok(Ok(0)) | Ok(Err(_)) => return done(i + 1, true, &answer),
                        Ok(Ok(n)) => answer.extend_from_slice(&buf[..n]),
                        Err(_) => return done(i + 1, false, &answer),
                    }
                }
            }
            Err(_) => {}
        }
    }
    done(lines.len(), false, &answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_closes_a_trickled_header_and_answers_a_slow_or_large_body_by_name() {
    let service = Service::start_api_with(&[
        ("PROVEN_HTTP_HEADER_TIMEOUT_SECONDS", "1"),
        ("PROVEN_HTTP_BODY_TIMEOUT_SECONDS", "1"),
        ("PROVEN_HTTP_MAX_BODY_BYTES", "1024"),
    ])
    .await;
    let addr = host_port(&service.base_url);
    // A client sending one header line every 250 ms for 15 s (fewer lines than hyper's limit
    // of 100 headers, which would end it with a 431): closed after about a second.
    let mut lines = vec![format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n")];
    lines.extend((0..60).map(|i| format!("X-Slow-{i}: y\r\n")));
    let mut slow = TcpStream::connect(&addr).await.expect("connect");
    let t = trickle(&mut slow, &lines, Duration::from_millis(250)).await;
    assert!(
        t.closed,
        "the server closes a connection trickling its headers: {}",
        t.answer
    );
    assert!(t.written < lines.len(), "closed after {} lines", t.written);
    assert!(
        !t.answer.contains(" 200 ") && !t.answer.contains(" 431 "),
        "{}",
        t.answer
    );
    // An idle kept-alive connection is closed the same way; a prompt request is served.
    let mut idle = TcpStream::connect(&addr).await.expect("connect");
    let prompt = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let t = trickle(&mut idle, &[prompt], Duration::from_secs(20)).await;
    assert!(t.answer.starts_with("HTTP/1.1 200"), "{}", t.answer);
    assert!(
        t.closed,
        "the idle kept-alive connection is closed: {}",
        t.answer
    );

    let client = crate::service::http();
    let token = service.tenant("bodies");
    // Over the body cap: 413, naming the setting.
    let big = serde_json::json!({"repository": "x".repeat(2000), "base": "a", "head": "b"});
    let (status, error) = error_of(
        client
            .post(format!("{}/v1/reviews", service.base_url))
            .bearer_auth(&token)
            .json(&big)
            .send()
            .await
            .expect("post"),
    )
    .await;
    assert_eq!(status, 413);
    assert_eq!(error["code"], "body_too_large");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("PROVEN_HTTP_MAX_BODY_BYTES")),
        "{error}"
    );
    // The same without a Content-Length (chunked): cut off at the cap, still 413.
    let mut chunked = TcpStream::connect(&addr).await.expect("connect");
    let mut lines = vec![format!(
        "POST /v1/reviews HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )];
    lines.extend((0..40).map(|_| format!("64\r\n{}\r\n", "x".repeat(100))));
    let t = trickle(&mut chunked, &lines, Duration::from_millis(20)).await;
    assert!(t.answer.starts_with("HTTP/1.1 413"), "{}", t.answer);
    assert!(t.answer.contains("body_too_large"), "{}", t.answer);
    // A body trickled slower than the body timeout allows: 408, naming the setting.
    let mut slow_body = TcpStream::connect(&addr).await.expect("connect");
    let mut lines = vec![format!(
        "POST /v1/reviews HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    )];
    lines.extend((0..100).map(|_| " ".repeat(10)));
    let t = trickle(&mut slow_body, &lines, Duration::from_millis(250)).await;
    assert!(
        t.written < lines.len(),
        "answered before the body was all sent"
    );
    assert!(t.answer.starts_with("HTTP/1.1 408"), "{}", t.answer);
    assert!(
        t.answer.contains("body_timeout") && t.answer.contains("PROVEN_HTTP_BODY_TIMEOUT_SECONDS"),
        "{}",
        t.answer
    );
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_limits_each_tokens_rate_with_429_and_retry_after() {
    let service = Service::start_api_with(&[
        ("PROVEN_HTTP_RATE_PER_SECOND", "1"),
        ("PROVEN_HTTP_RATE_BURST", "3"),
    ])
    .await;
    let client = crate::service::http();
    let eager = service.tenant("eager");
    let calm = service.tenant("calm");
    let list = |token: &str| {
        client
            .get(format!("{}/v1/reviews", service.base_url))
            .bearer_auth(token)
            .send()
    };
    for _ in 0..3 {
        assert_eq!(
            list(&eager).await.expect("list").status(),
            200,
            "within the burst"
        );
    }
    // One more per second refills: back to back, one of the next few is refused.
    let mut refused = None;
    for _ in 0..10 {
        let r = list(&eager).await.expect("list");
        if r.status() == 429 {
            refused = Some(r);
            break;
        }
    }
    let refused = refused.expect("a token over its rate is refused");
    let retry_after: u64 = refused
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("a Retry-After in whole seconds");
    assert!(retry_after >= 1, "{retry_after}");
    let (_, error) = error_of(refused).await;
    assert_eq!(error["code"], "rate_limited");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("PROVEN_HTTP_RATE_PER_SECOND")),
        "{error}"
    );
    // The limit is the token's: another tenant's token is served.
    assert_eq!(list(&calm).await.expect("list").status(), 200);
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_caps_queued_reviews_batch_sizes_and_deadlines_by_name() {
    let service = Service::start_api_with(&[
        ("PROVEN_MAX_QUEUED_REVIEWS", "3"),
        ("PROVEN_MAX_BATCH_REVIEWS", "2"),
        ("PROVEN_MAX_DEADLINE_SECONDS", "60"),
    ])
    .await;
    let client = crate::service::http();
    let busy = service.tenant("busy");
    let other = service.tenant("other");
    // A repository the policy admits (under PROVEN_REPO_ROOTS, the tests' temporary directory).
    let repo = tempfile::tempdir().expect("tempdir");
    let repository = repo.path().display().to_string();
    let review = serde_json::json!({"repository": repository, "base": "a", "head": "b"});
    let post = |path: &str, token: &str, body: &serde_json::Value| {
        client
            .post(format!("{}{path}", service.base_url))
            .bearer_auth(token)
            .json(body)
            .send()
    };
    // No worker runs: each review stays unfinished (queued, or running once admitted).
    for _ in 0..3 {
        assert_eq!(
            post("/v1/reviews", &busy, &review)
                .await
                .expect("post")
                .status(),
            202
        );
    }
    let (status, error) = error_of(post("/v1/reviews", &busy, &review).await.expect("post")).await;
    assert_eq!(status, 429);
    assert_eq!(error["code"], "queue_full");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("cap of 3") && m.contains("PROVEN_MAX_QUEUED_REVIEWS")),
        "{error}"
    );
    // The cap is per tenant.
    assert_eq!(
        post("/v1/reviews", &other, &review)
            .await
            .expect("post")
            .status(),
        202
    );
    // A batch larger than the batch cap: 422, naming the setting.
    let three = serde_json::json!({"reviews": [review, review, review]});
    let (status, error) = error_of(post("/v1/batches", &other, &three).await.expect("post")).await;
    assert_eq!(status, 422);
    assert_eq!(error["code"], "batch_too_large");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("PROVEN_MAX_BATCH_REVIEWS")),
        "{error}"
    );
    // A batch that fits the batch cap but not the queue: 429, and nothing of it is recorded.
    let two = serde_json::json!({"reviews": [review, review]});
    assert_eq!(
        post("/v1/batches", &other, &two)
            .await
            .expect("post")
            .status(),
        202
    );
    let (status, error) = error_of(post("/v1/batches", &other, &two).await.expect("post")).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (429, Some("queue_full")),
        "{error}"
    );
    let listed: serde_json::Value = client
        .get(format!("{}/v1/reviews", service.base_url))
        .bearer_auth(&other)
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(
        listed["reviews"].as_array().map(Vec::len),
        Some(3),
        "{listed:#}"
    );
    // A deadline over the maximum: 422 naming the field, the maximum and the setting.
    let late = serde_json::json!({"repository": repository, "base": "a", "head": "b", "deadline_secs": 61});
    let (status, error) = error_of(post("/v1/reviews", &other, &late).await.expect("post")).await;
    assert_eq!(status, 422);
    assert_eq!(
        error["message"],
        "deadline_secs 61 is over the maximum of 60 (PROVEN_MAX_DEADLINE_SECONDS)"
    );
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_refuses_revoked_and_rotated_tokens_and_lists_tokens_by_id_only() {
    let service = Service::start_api_with(&[]).await;
    let client = crate::service::http();
    let first = service.tenant("acme");
    let cli = |args: &[&str]| {
        proven(&service.store.url, &service.prefix, service.data_dir.path())
            .args(args)
            .output()
            .expect("run proven")
    };
    let status = |token: String| {
        let client = client.clone();
        let url = format!("{}/v1/reviews", service.base_url);
        async move {
            let r = client
                .get(url)
                .bearer_auth(token)
                .send()
                .await
                .expect("get");
            let status = r.status().as_u16();
            let code = r
                .json::<serde_json::Value>()
                .await
                .ok()
                .map(|b| b["error"]["code"].clone());
            (status, code.and_then(|c| c.as_str().map(String::from)))
        }
    };
    assert_eq!(status(first.clone()).await.0, 200);
    // Rotation: a new token printed, the old one refused at once (no overlap).
    let out = cli(&["tenant", "rotate", "acme"]);
    assert!(out.status.success(), "{:?}", text(&out));
    let second = text(&out).0.trim().to_string();
    assert!(second.starts_with("pvn_") && second != first);
    assert_eq!(
        status(first.clone()).await,
        (401, Some("revoked_token".into()))
    );
    assert_eq!(status(second.clone()).await.0, 200);
    // The listing names tokens by id with their dates, and never shows a token.
    let out = cli(&["tenant", "list"]);
    assert!(out.status.success(), "{:?}", text(&out));
    let listing = text(&out).0;
    let first_id = proven_store::token_id(&proven_store::token_hash(&first));
    let second_id = proven_store::token_id(&proven_store::token_hash(&second));
    assert!(listing.starts_with("acme\t"), "{listing}");
    assert!(
        listing
            .lines()
            .any(|l| l.contains(&first_id) && l.contains("revoked 20")),
        "{listing}"
    );
    assert!(
        listing
            .lines()
            .any(|l| l.contains(&second_id) && l.ends_with("live")),
        "{listing}"
    );
    assert!(
        !listing.contains(&first) && !listing.contains(&second),
        "{listing}"
    );
    // Revocation: the live token gets 401 from the next request on.
    let out = cli(&["tenant", "revoke", "acme", "--token", &second_id]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains(&format!("revoked {second_id} of tenant acme"))
    );
    assert_eq!(status(second).await, (401, Some("revoked_token".into())));
    // An unknown tenant or token is named (exit 4).
    let out = cli(&["tenant", "revoke", "nobody"]);
    assert_eq!(out.status.code(), Some(4), "{:?}", text(&out));
    assert!(
        text(&out).1.contains("tenant nobody not found"),
        "{:?}",
        text(&out)
    );
    let out = cli(&["tenant", "revoke", "acme", "--token", "tok_nope"]);
    assert_eq!(out.status.code(), Some(4), "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("live token tok_nope of tenant acme not found")
    );
    service.stop().await;
}
