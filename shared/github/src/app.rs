//! The GitHub App's credentials: its private key signs a JWT (RS256) that buys an
//! installation access token, cached until shortly before it expires. Tokens are secrets:
//! never stored, never logged, never handed to a sandbox.
//!
//! The JWT is written here over ring (already linked through rustls) rather than with
//! jsonwebtoken, which would add aws-lc-rs or the RustCrypto RSA and EC stacks to the build
//! for one signature; the encoding is three base64url parts, the signing is ring's.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject;
use secrecy::{ExposeSecret, SecretString};
use time::OffsetDateTime;

use crate::client::{Client, GitHubError};

/// A token is used until this long before GitHub says it expires.
pub const TOKEN_MARGIN: Duration = Duration::from_secs(300);

/// The app's private key could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the GitHub App's private key (PROVEN_GITHUB_PRIVATE_KEY): {0}")]
pub struct KeyError(pub String);

pub struct App {
    pub id: u64,
    key: RsaKeyPair,
    /// By installation and repository: each token reaches one repository only.
    tokens: Mutex<HashMap<(u64, String), (SecretString, OffsetDateTime)>>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl App {
    /// The app `id` with its private key as GitHub hands it out (PEM: PKCS#1
    /// `RSA PRIVATE KEY`, or PKCS#8 `PRIVATE KEY`).
    pub fn from_pem(id: u64, pem: &[u8]) -> Result<App, KeyError> {
        let der = PrivateKeyDer::from_pem_slice(pem).map_err(|e| KeyError(e.to_string()))?;
        let key = match &der {
            PrivateKeyDer::Pkcs1(k) => RsaKeyPair::from_der(k.secret_pkcs1_der()),
            PrivateKeyDer::Pkcs8(k) => RsaKeyPair::from_pkcs8(k.secret_pkcs8_der()),
            _ => return Err(KeyError("not an RSA key".into())),
        }
        .map_err(|e| KeyError(format!("not a usable RSA key ({e})")))?;
        Ok(App {
            id,
            key,
            tokens: Mutex::new(HashMap::new()),
        })
    }

    /// The app's JWT at `now` (unix seconds): issued a minute back (clock drift), valid
    /// nine minutes after (GitHub allows ten).
    pub fn jwt(&self, now: i64) -> Result<String, KeyError> {
        let header = b64(br#"{"alg":"RS256","typ":"JWT"}"#);
        let claims =
            serde_json::json!({"iat": now - 60, "exp": now + 540, "iss": self.id.to_string()});
        let input = format!("{header}.{}", b64(claims.to_string().as_bytes()));
        let mut sig = vec![0; self.key.public().modulus_len()];
        self.key
            .sign(
                &RSA_PKCS1_SHA256,
                &ring::rand::SystemRandom::new(),
                input.as_bytes(),
                &mut sig,
            )
            .map_err(|_| KeyError("signing the JWT failed".into()))?;
        Ok(format!("{input}.{}", b64(&sig)))
    }

    /// An access token of `installation` for the one repository `repository` (`owner/name`):
    /// the cached one while it has more than [`TOKEN_MARGIN`] left, else a new one from
    /// `POST /app/installations/{id}/access_tokens`, scoped to that repository (a pull
    /// request's clone and its publishing never hold a token for the organisation's others).
    pub async fn token(
        &self,
        client: &Client,
        installation: u64,
        repository: &str,
    ) -> Result<SecretString, GitHubError> {
        let now = OffsetDateTime::now_utc();
        let key = (installation, repository.to_string());
        if let Some((token, until)) = self.cached(&key)
            && until - TOKEN_MARGIN > now
        {
            return Ok(token);
        }
        let jwt = self
            .jwt(now.unix_timestamp())
            .map_err(|e| GitHubError::Credentials(e.to_string()))?;
        let name = repository.rsplit('/').next().unwrap_or(repository);
        let (token, expires_at) = client.installation_token(&jwt, installation, name).await?;
        if let Ok(mut map) = self.tokens.lock() {
            map.insert(key, (token.clone(), expires_at));
        }
        Ok(token)
    }

    fn cached(&self, key: &(u64, String)) -> Option<(SecretString, OffsetDateTime)> {
        let map = self.tokens.lock().ok()?;
        map.get(key)
            .map(|(t, at)| (SecretString::from(t.expose_secret().to_string()), *at))
    }

    /// Drops the installation's cached tokens after GitHub refused one (401): the next call
    /// mints new ones.
    pub fn forget(&self, installation: u64) {
        if let Ok(mut map) = self.tokens.lock() {
            map.retain(|(i, _), _| *i != installation);
        }
    }
}
