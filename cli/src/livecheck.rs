//! `proven livecheck`: is every configured service there? Checks the store, the queue,
//! Docker and each model role, and names what is missing.

use std::time::Duration;

use proven_config::Config;
use proven_models::{ChatRequest, Endpoint, ModelClient};
use proven_store::Store;

use crate::exit::{self, Exit};

struct Check {
    service: String,
    ok: bool,
    detail: String,
}

fn endpoint(m: &proven_config::ModelSettings) -> Endpoint {
    let mut e = Endpoint::new(m.base_url.clone(), m.model.clone());
    if !m.api_key.is_empty() {
        e.api_key = Some(m.api_key.clone().into());
    }
    e.timeout = Duration::from_secs(20);
    e.max_retries = 0;
    e
}

async fn model(role: &'static str, m: &proven_config::ModelSettings) -> Check {
    let service = format!("model {role} ({} at {})", m.model, m.base_url);
    let client = match ModelClient::new(endpoint(m)) {
        Ok(c) => c,
        Err(e) => {
            return Check {
                service,
                ok: false,
                detail: e,
            };
        }
    };
    let request = ChatRequest {
        role,
        system: "Answer only the JSON object {\"ok\": true}.".into(),
        user: "Are you there?".into(),
        max_tokens: Some(16),
        json: true,
    };
    match client.chat(&request).await {
        Ok((_, record)) => Check {
            service,
            ok: true,
            detail: format!(
                "answered in {} ms as {}",
                record.latency_ms,
                record.model.unwrap_or_default()
            ),
        },
        Err(e) => Check {
            service,
            ok: false,
            detail: e.to_string(),
        },
    }
}

/// An address as it may be printed: a password in it never is (`***` stands for it).
fn shown(address: &str) -> String {
    match url::Url::parse(address) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(_) => address.to_string(),
        Err(_) => "(an address that does not parse)".into(),
    }
}

/// The store: whether it opened and answers.
async fn store(opened: Result<Store, Exit>) -> Check {
    match opened {
        Ok(store) => match store.ping().await {
            Ok(()) => Check {
                service: "store".into(),
                ok: true,
                detail: format!("{:?} answers", store.dialect()),
            },
            Err(e) => Check {
                service: "store".into(),
                ok: false,
                detail: e.to_string(),
            },
        },
        Err(e) => Check {
            service: "store".into(),
            ok: false,
            detail: e.message,
        },
    }
}

/// The queue: whether Redis answers a PING within 3 s (its address shown without a
/// password).
async fn queue(config: &Config) -> Check {
    let redis = async {
        let client = redis::Client::open(config.redis_url.as_str()).map_err(|e| e.to_string())?;
        let mut conn = client
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| e.to_string())?;
        redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .map_err(|e| e.to_string())
    };
    let redis_at = shown(&config.redis_url);
    match tokio::time::timeout(Duration::from_secs(3), redis).await {
        Ok(Ok(_)) => Check {
            service: format!("queue (Redis at {redis_at})"),
            ok: true,
            detail: "answers".into(),
        },
        Ok(Err(e)) => Check {
            service: format!("queue (Redis at {redis_at})"),
            ok: false,
            detail: format!(
                "{} (needed by `proven serve` and `proven worker`, not by `proven review`)",
                e.replace(&config.redis_url, &redis_at)
            ),
        },
        Err(_) => Check {
            service: format!("queue (Redis at {redis_at})"),
            ok: false,
            detail: "no answer in 3 s".into(),
        },
    }
}

/// The sandbox: whether Docker answers, then each language's image (a missing one fails
/// every test of that language).
async fn sandbox(config: &Config) -> Vec<Check> {
    let sandbox_config =
        proven_sandbox::SandboxConfig::from_settings(&config.sandbox).unwrap_or_default();
    let sandbox = match proven_sandbox::Sandbox::connect(sandbox_config).await {
        Ok(sandbox) => sandbox,
        Err(e) => {
            return vec![Check {
                service: "sandbox (Docker)".into(),
                ok: false,
                detail: format!("{e} (install docker.io and run `proven sandbox images`)"),
            }];
        }
    };
    let mut checks = vec![Check {
        service: "sandbox (Docker)".into(),
        ok: true,
        detail: "the engine answers".into(),
    }];
    for language in proven_sandbox::Language::ALL {
        let image = sandbox.config().image(language);
        let found = sandbox.docker().inspect_image(&image).await.is_ok();
        checks.push(Check {
            service: format!("sandbox image ({language})"),
            ok: found,
            detail: if found {
                image
            } else {
                format!("{image} is missing (run `proven sandbox images {language}`)")
            },
        });
    }
    checks
}

/// Checks every service and prints the table whatever is down: a store that cannot be
/// opened is a row of the table (`opened`), not the end of the command.
pub async fn run(opened: Result<Store, Exit>, config: &Config) -> Result<u8, Exit> {
    let mut checks = vec![store(opened).await, queue(config).await];
    checks.extend(sandbox(config).await);
    if config.agents {
        checks.push(model("generator", &config.generator).await);
        checks.push(model("skeptic", &config.skeptic).await);
        if config.guardrail {
            checks.push(model("guardrail", &config.guardrail_model).await);
        }
        if let Some(second) = &config.second_reviewer {
            checks.push(model("second reviewer", second).await);
        }
    } else {
        checks.push(Check {
            service: "models".into(),
            ok: false,
            detail: "not configured: set PROVEN_GENERATOR_API_KEY (or PROVEN_GENERATOR_BASE_URL) to run the agents".into(),
        });
    }
    let mut missing = 0;
    for c in &checks {
        println!(
            "{} {:<60} {}",
            if c.ok { "ok     " } else { "MISSING" },
            c.service,
            c.detail
        );
        missing += usize::from(!c.ok);
    }
    if missing == 0 {
        Ok(0)
    } else {
        eprintln!("proven: {missing} service(s) missing");
        Ok(exit::INCOMPLETE)
    }
}
