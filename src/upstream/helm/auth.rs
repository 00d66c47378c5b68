//! `REVENDOR_HELM_AUTH`: basic credentials for private chart repositories.
//!
//! The variable is `host=user:password,…` (a host may carry its port). A
//! request gets the credentials of its URL's own host only, so an archive
//! listed on another host (a release page, a CDN) never receives them. The
//! password is never printed: [`Auth`]'s `Debug` hides it, and errors name
//! the host alone.

use base64::Engine;

/// The credentials of one variable, by host.
#[derive(Clone, Default)]
pub struct Auth {
    hosts: Vec<(String, String)>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hosts: Vec<&str> = self.hosts.iter().map(|(h, _)| h.as_str()).collect();
        f.debug_struct("Auth").field("hosts", &hosts).finish()
    }
}

impl Auth {
    /// Reads the variable's value; the error names the entry's host (never
    /// its password) and what is wrong.
    pub fn parse(value: Option<&str>) -> Result<Auth, String> {
        let mut hosts = Vec::new();
        for entry in value
            .unwrap_or_default()
            .split(',')
            .filter(|e| !e.trim().is_empty())
        {
            let Some((host, credentials)) = entry.trim().split_once('=') else {
                return Err("an entry is not `host=user:password`".into());
            };
            if host.is_empty() || !credentials.contains(':') {
                return Err(format!(
                    "the entry for `{host}` is not `host=user:password`"
                ));
            }
            let header = base64::engine::general_purpose::STANDARD.encode(credentials);
            hosts.push((host.to_ascii_lowercase(), format!("Basic {header}")));
        }
        Ok(Auth { hosts })
    }

    /// The `Authorization` header for `url`, when its host (with its port,
    /// if the entry names one) has credentials.
    pub fn header_for(&self, url: &str) -> Option<&str> {
        let parsed = reqwest::Url::parse(url).ok()?;
        let host = parsed.host_str()?.to_ascii_lowercase();
        let with_port = parsed.port().map(|p| format!("{host}:{p}"));
        self.hosts
            .iter()
            .find(|(h, _)| *h == host || Some(h) == with_port.as_ref())
            .map(|(_, header)| header.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_to_their_own_host_only() {
        let auth = Auth::parse(Some("charts.example.com=u:p@ss,127.0.0.1:8080=a:b")).unwrap();
        assert_eq!(
            auth.header_for("https://charts.example.com/x/index.yaml"),
            Some("Basic dTpwQHNz")
        );
        assert_eq!(
            auth.header_for("http://127.0.0.1:8080/index.yaml"),
            Some("Basic YTpi")
        );
        assert_eq!(auth.header_for("http://127.0.0.1:9090/index.yaml"), None);
        assert_eq!(auth.header_for("https://cdn.example.com/a.tgz"), None);
        assert!(!format!("{auth:?}").contains("p@ss"));
    }

    #[test]
    fn a_malformed_entry_names_its_host_and_never_its_password() {
        let err = Auth::parse(Some("h.example=secret")).unwrap_err();
        assert!(
            err.contains("`h.example`") && !err.contains("secret"),
            "{err}"
        );
        assert!(Auth::parse(Some("nohost")).is_err());
        assert!(
            Auth::parse(None)
                .unwrap()
                .header_for("https://a/")
                .is_none()
        );
    }
}
