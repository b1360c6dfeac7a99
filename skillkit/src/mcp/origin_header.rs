//! The `Origin` check of the HTTP transport, as MCP's Streamable HTTP
//! section asks against DNS rebinding: a request whose `Origin` is not an
//! allowed origin is refused; a request without `Origin` (not from a
//! browser) passes. By default the loopback origins are allowed
//! (`http(s)://localhost`, `127.0.0.1`, `[::1]`, any port).

/// An allowed origin's port.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Port {
    Any,
    Is(u16),
}

/// One allowed origin: a scheme, a host (lowercase, IPv6 in brackets) and a
/// port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Allowed {
    scheme: String,
    host: String,
    port: Port,
}

/// The loopback origins, any port.
pub(super) fn loopback() -> Vec<Allowed> {
    let mut all = Vec::new();
    for scheme in ["http", "https"] {
        for host in ["localhost", "127.0.0.1", "[::1]"] {
            all.push(Allowed {
                scheme: scheme.to_owned(),
                host: host.to_owned(),
                port: Port::Any,
            });
        }
    }
    all
}

/// `scheme://host[:port]`, split; the port is the scheme's default when
/// absent.
fn split(text: &str) -> Option<(String, String, Option<&str>)> {
    let (scheme, rest) = text.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match rest.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6.split_once(']')?;
            (format!("[{host}]"), after.strip_prefix(':'))
        }
        None => match rest.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), Some(port)),
            None => (rest.to_owned(), None),
        },
    };
    if host.is_empty() || host.contains(['/', '@', '?', '#']) {
        return None;
    }
    Some((scheme, host.to_ascii_lowercase(), port))
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

impl Allowed {
    /// `scheme://host[:port]`, where the port may be `*` (any port); without
    /// a port, the scheme's default.
    pub(super) fn parse(text: &str) -> Option<Allowed> {
        let (scheme, host, port) = split(text)?;
        let port = match port {
            Some("*") => Port::Any,
            Some(port) => Port::Is(port.parse().ok()?),
            None => Port::Is(default_port(&scheme)?),
        };
        Some(Allowed { scheme, host, port })
    }

    fn admits(&self, scheme: &str, host: &str, port: u16) -> bool {
        self.scheme == scheme
            && self.host == host
            && match self.port {
                Port::Any => true,
                Port::Is(p) => p == port,
            }
    }
}

/// Whether a request with this `Origin` header value may be served.
pub(super) fn allowed(origin: &str, allowed: &[Allowed]) -> bool {
    let Some((scheme, host, port)) = split(origin.trim()) else {
        return false;
    };
    let port = match port {
        Some(port) => port.parse().ok(),
        None => default_port(&scheme),
    };
    port.is_some_and(|port| allowed.iter().any(|a| a.admits(&scheme, &host, port)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_pass_on_any_port_and_others_do_not() {
        let loopback = loopback();
        for origin in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8443",
            "http://[::1]:80",
            "HTTP://LocalHost:1",
        ] {
            assert!(allowed(origin, &loopback), "{origin}");
        }
        for origin in [
            "https://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io",
            "null",
            "file://",
            "http://user@localhost",
            "http://localhost:notaport",
        ] {
            assert!(!allowed(origin, &loopback), "{origin}");
        }
    }

    #[test]
    fn configured_origins_match_scheme_host_and_port() {
        let list = [
            Allowed::parse("https://app.example.com").unwrap(),
            Allowed::parse("http://dev.example.com:*").unwrap(),
        ];
        assert!(allowed("https://app.example.com", &list));
        assert!(allowed("https://app.example.com:443", &list));
        assert!(!allowed("https://app.example.com:8443", &list));
        assert!(!allowed("http://app.example.com", &list));
        assert!(allowed("http://dev.example.com:5173", &list));
        assert!(Allowed::parse("app.example.com").is_none());
    }
}
