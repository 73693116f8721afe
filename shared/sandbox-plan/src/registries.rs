//! The registries a preparation may reach, as the operator lists them.

/// Hosts a preparation may reach: `host` (ports 443 and 80), `host:port`, or `*.domain`;
/// `name[:port]=address:port` allows `name` and connects it to a fixed address (an
/// operator's registry with no DNS name a container would resolve, or a test's server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<(String, Option<u16>)>,
    /// Per entry (same index): the address it connects to instead of its name.
    connect_to: Vec<Option<String>>,
}

/// The registries of the four ecosystems the sandbox prepares.
pub const DEFAULT_REGISTRIES: &[&str] = &[
    "pypi.org",
    "files.pythonhosted.org",
    "registry.npmjs.org",
    "index.crates.io",
    "static.crates.io",
    "crates.io",
    "proxy.golang.org",
    "sum.golang.org",
];

impl AllowList {
    pub fn parse(entries: &[String]) -> Result<AllowList, String> {
        let mut parsed = Vec::new();
        let mut connect_to = Vec::new();
        for raw in entries {
            let entry = raw.trim().to_ascii_lowercase();
            if entry.is_empty() {
                continue;
            }
            let (entry, to) = match entry.split_once('=') {
                Some((name, to)) => {
                    if authority(to, 0).is_none_or(|(_, p)| p == 0) {
                        return Err(format!("{raw:?}: {to:?} is not an address:port"));
                    }
                    (name.to_string(), Some(to.to_string()))
                }
                None => (entry, None),
            };
            let (host, port) = match entry.rsplit_once(':') {
                Some((h, p)) if !h.contains(']') || h.ends_with(']') => {
                    let port = p
                        .parse::<u16>()
                        .map_err(|_| format!("{raw:?}: the port is not a number"))?;
                    (h.to_string(), Some(port))
                }
                _ => (entry.clone(), None),
            };
            let valid = !host.is_empty()
                && host
                    .trim_start_matches("*.")
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-[]:".contains(c));
            if !valid || host.contains("..") {
                return Err(format!("{raw:?} is not a host name"));
            }
            parsed.push((host, port));
            connect_to.push(to);
        }
        Ok(AllowList {
            entries: parsed,
            connect_to,
        })
    }

    pub fn defaults() -> AllowList {
        AllowList::parse(
            &DEFAULT_REGISTRIES
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
        )
        .unwrap_or(AllowList {
            entries: Vec::new(),
            connect_to: Vec::new(),
        })
    }

    pub fn allows(&self, host: &str, port: u16) -> bool {
        self.find(host, port).is_some()
    }

    fn find(&self, host: &str, port: u16) -> Option<usize> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.entries.iter().position(|(h, p)| {
            let host_ok = match h.strip_prefix("*.") {
                Some(domain) => host.ends_with(&format!(".{domain}")),
                None => *h == host,
            };
            host_ok
                && match p {
                    Some(p) => *p == port,
                    None => port == 443 || port == 80,
                }
        })
    }

    /// Where to connect for an allowed `host:port`: its fixed address, or itself.
    pub fn target(&self, host: &str, port: u16) -> Option<String> {
        let i = self.find(host, port)?;
        Some(
            self.connect_to
                .get(i)
                .cloned()
                .flatten()
                .unwrap_or_else(|| format!("{host}:{port}")),
        )
    }

    /// The entries as written, for a record.
    pub fn names(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|(h, p)| match p {
                Some(p) => format!("{h}:{p}"),
                None => h.clone(),
            })
            .collect()
    }
}

/// `host:port` of an authority, with a default port.
pub fn authority(text: &str, default_port: u16) -> Option<(String, u16)> {
    let text = text.trim();
    if text.is_empty() || text.contains(['/', '@', ' ']) {
        return None;
    }
    if let Some(rest) = text.strip_prefix('[') {
        let (host, tail) = rest.split_once(']')?;
        let port = match tail.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default_port,
        };
        return Some((host.to_string(), port));
    }
    match text.rsplit_once(':') {
        Some((h, p)) => Some((h.to_string(), p.parse().ok()?)),
        None => Some((text.to_string(), default_port)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allow_list_names_hosts_ports_and_domains() {
        let allow = AllowList::parse(&[
            "pypi.org".into(),
            "127.0.0.1:8123".into(),
            "*.example.com".into(),
        ])
        .expect("parse");
        assert!(allow.allows("pypi.org", 443));
        assert!(allow.allows("PyPI.org.", 80));
        assert!(
            !allow.allows("pypi.org", 8080),
            "a bare host allows 443 and 80 only"
        );
        assert!(!allow.allows("evil-pypi.org", 443));
        assert!(!allow.allows("pypi.org.evil.com", 443));
        assert!(allow.allows("127.0.0.1", 8123));
        assert!(!allow.allows("127.0.0.1", 6379));
        assert!(allow.allows("files.example.com", 443));
        assert!(
            !allow.allows("example.com", 443),
            "*.domain names its subdomains"
        );
        assert!(AllowList::parse(&["bad host".into()]).is_err());
        assert!(AllowList::parse(&["host:notaport".into()]).is_err());
        assert!(AllowList::defaults().allows("registry.npmjs.org", 443));
        let fixed = AllowList::parse(&["goproxy.test=127.0.0.1:9000".into()]).expect("parse");
        assert_eq!(
            fixed.target("goproxy.test", 80).as_deref(),
            Some("127.0.0.1:9000")
        );
        assert_eq!(fixed.target("other.test", 80), None);
        assert!(AllowList::parse(&["x.test=nowhere".into()]).is_err());
    }

    #[test]
    fn authorities_read_with_their_default_port() {
        assert_eq!(
            authority("pypi.org:443", 443),
            Some(("pypi.org".into(), 443))
        );
        assert_eq!(authority("pypi.org", 80), Some(("pypi.org".into(), 80)));
        assert_eq!(authority("[::1]:8080", 80), Some(("::1".into(), 8080)));
        assert_eq!(authority("user@host:1", 80), None);
        assert_eq!(authority("host/x", 80), None);
    }
}
