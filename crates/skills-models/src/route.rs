//! Where an adapter posts: a base URL joined with the provider's path, the
//! common base-URL mistakes accepted where the intent is unambiguous, and
//! the hint a 404 or a refused connection gets.
//!
//! The two providers disagree on what a base URL is: OpenAI's includes the
//! API version (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`)
//! and the adapter appends `/chat/completions` or `/responses`; Anthropic's
//! is the server's root (`https://api.anthropic.com`) and the adapter
//! appends `/v1/messages`. A base URL of the wrong form used to give a bare
//! 404. Now:
//!
//! - An Anthropic base URL ending in `/v1` is taken as the root plus the
//!   version (`…/v1` + `/messages`): no Messages server lives at
//!   `…/v1/v1/messages`, so the intent is clear.
//! - A base URL that already ends in the endpoint's own path
//!   (`…/v1/messages`, `…/chat/completions`, `…/responses`) is used as it
//!   is (the whole endpoint URL was pasted).
//! - An OpenAI base URL without a version is used as given: some compatible
//!   servers (Perplexity, DeepSeek) serve `/chat/completions` at their
//!   root, so appending `/v1` could be wrong. A 404 from it says "usually
//!   ends in /v1" and which URL to try.
//! - A query string (`?api-version=…`) stays at the end of the URL.
//!
//! Every 404 and 405 and every failed connection names the exact URL tried
//! (without user name, password or query) and the setting to check.

/// Which provider's rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    /// OpenAI Chat Completions: `{base}/chat/completions`.
    OpenAiChat,
    /// OpenAI Responses: `{base}/responses`.
    OpenAiResponses,
    /// Anthropic Messages: `{base}/v1/messages`.
    Anthropic,
}

impl Api {
    /// The path appended to a base URL of the documented form.
    fn path(self) -> &'static str {
        match self {
            Self::OpenAiChat => "/chat/completions",
            Self::OpenAiResponses => "/responses",
            Self::Anthropic => "/v1/messages",
        }
    }

    /// The environment variable that holds this provider's base URL.
    pub(crate) fn base_var(self) -> &'static str {
        match self {
            Self::OpenAiChat | Self::OpenAiResponses => "OPENAI_BASE_URL",
            Self::Anthropic => "ANTHROPIC_BASE_URL",
        }
    }
}

/// An endpoint URL and what it was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    /// The full URL requests are posted to.
    pub(crate) url: String,
    /// The base URL as given, trimmed.
    base: String,
    api: Api,
    /// Whether the base URL came from the environment variable (then hints
    /// name it).
    from_env: bool,
}

impl Route {
    /// The endpoint of `api` under `base`.
    pub(crate) fn new(api: Api, base: &str) -> Self {
        let base = base.trim();
        let (path, query) = match base.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (base, None),
        };
        let path = path.trim_end_matches('/');
        let mut url = if path.ends_with(api.path()) {
            path.to_owned()
        } else if api == Api::Anthropic && path.ends_with("/v1") {
            format!("{path}/messages")
        } else {
            format!("{path}{}", api.path())
        };
        if let Some(query) = query {
            url.push('?');
            url.push_str(query);
        }
        Self {
            url,
            base: base.to_owned(),
            api,
            from_env: false,
        }
    }

    /// Marks the base URL as read from the provider's environment variable
    /// (hints then name it).
    pub(crate) fn mark_from_env(&mut self) {
        self.from_env = true;
    }

    /// How hints name the base URL: the variable, or "the base URL".
    fn setting(&self) -> String {
        if self.from_env {
            self.api.base_var().to_owned()
        } else {
            "the base URL".to_owned()
        }
    }

    /// The URL as messages show it: no user name, password, query or
    /// fragment (they may hold keys).
    pub(crate) fn shown(&self) -> String {
        shown(&self.url)
    }

    /// The message of a 404 or 405: the provider's, the URL tried, and
    /// the likely fix. A message about the model (`The model `x` does not
    /// exist`) gets only the URL: the base URL is probably right.
    pub(crate) fn not_found_message(&self, provider_message: &str) -> String {
        let tried = format!("{provider_message} (POST {})", self.shown());
        if provider_message.to_ascii_lowercase().contains("model") {
            return tried;
        }
        let setting = self.setting();
        let base = shown(&self.base);
        let base = base.trim_end_matches('/');
        match self.api {
            Api::Anthropic => format!(
                "{tried}; {setting} should be the server's root, without /v1: requests go to \
                 {setting} + /v1/messages"
            ),
            Api::OpenAiChat | Api::OpenAiResponses if !has_version(base) => {
                format!("{tried}; {setting} usually ends in /v1: try {base}/v1")
            }
            Api::OpenAiChat | Api::OpenAiResponses => format!(
                "{tried}; check {setting}: requests go to {setting} + {}",
                self.api.path()
            ),
        }
    }

    /// The message of a failed connection: the URL, why, and the setting
    /// to check.
    pub(crate) fn connect_message(&self, causes: &str) -> String {
        format!(
            "cannot connect to {}: {causes}; is the server running, and is {} right?",
            self.shown(),
            self.setting()
        )
    }
}

/// Whether a base URL's path has a version segment (`v1`, `v1beta`, `v4`).
fn has_version(base: &str) -> bool {
    let path = base
        .split_once("://")
        .map_or(base, |(_, rest)| rest)
        .split_once('/')
        .map_or("", |(_, path)| path);
    path.split('/').any(|segment| {
        let mut chars = segment.chars();
        chars.next() == Some('v') && chars.next().is_some_and(|c| c.is_ascii_digit())
    })
}

/// `url` without user info, query and fragment.
pub(crate) fn shown(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or_default();
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = match rest.find('/') {
                Some(i) => rest.split_at(i),
                None => (rest, ""),
            };
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_route(api: Api, base: &str) -> Route {
        let mut route = Route::new(api, base);
        route.mark_from_env();
        route
    }

    #[test]
    fn documented_forms_get_the_providers_path() {
        let cases = [
            (
                Api::OpenAiChat,
                "https://api.openai.com/v1/",
                "https://api.openai.com/v1/chat/completions",
            ),
            (
                Api::OpenAiResponses,
                "http://127.0.0.1:8080/v1",
                "http://127.0.0.1:8080/v1/responses",
            ),
            (
                Api::Anthropic,
                " https://api.anthropic.com ",
                "https://api.anthropic.com/v1/messages",
            ),
            (
                Api::Anthropic,
                "https://api.deepseek.com/anthropic",
                "https://api.deepseek.com/anthropic/v1/messages",
            ),
        ];
        for (api, base, url) in cases {
            assert_eq!(Route::new(api, base).url, url, "{base}");
        }
    }

    #[test]
    fn unambiguous_mistakes_are_accepted() {
        let cases = [
            // Anthropic with the version: the root plus /v1.
            (
                Api::Anthropic,
                "https://api.anthropic.com/v1",
                "https://api.anthropic.com/v1/messages",
            ),
            (
                Api::Anthropic,
                "http://127.0.0.1:9/v1/",
                "http://127.0.0.1:9/v1/messages",
            ),
            // The whole endpoint pasted.
            (
                Api::Anthropic,
                "https://api.anthropic.com/v1/messages",
                "https://api.anthropic.com/v1/messages",
            ),
            (
                Api::OpenAiChat,
                "http://127.0.0.1:11434/v1/chat/completions",
                "http://127.0.0.1:11434/v1/chat/completions",
            ),
            (
                Api::OpenAiResponses,
                "https://api.openai.com/v1/responses/",
                "https://api.openai.com/v1/responses",
            ),
            // A query stays last.
            (
                Api::OpenAiChat,
                "https://x.example/openai/deployments/d?api-version=2024-10-21",
                "https://x.example/openai/deployments/d/chat/completions?api-version=2024-10-21",
            ),
        ];
        for (api, base, url) in cases {
            assert_eq!(Route::new(api, base).url, url, "{base}");
        }
        // OpenAI without a version is ambiguous: used as given.
        assert_eq!(
            Route::new(Api::OpenAiChat, "https://api.perplexity.ai").url,
            "https://api.perplexity.ai/chat/completions"
        );
    }

    #[test]
    fn hints_name_the_url_and_the_fix() {
        let route = env_route(Api::OpenAiChat, "http://127.0.0.1:11434/");
        assert_eq!(
            route.not_found_message("404 page not found"),
            "404 page not found (POST http://127.0.0.1:11434/chat/completions); OPENAI_BASE_URL \
             usually ends in /v1: try http://127.0.0.1:11434/v1"
        );
        let route = Route::new(Api::OpenAiResponses, "https://proxy.example/v1beta/openai");
        assert_eq!(
            route.not_found_message("Not Found"),
            "Not Found (POST https://proxy.example/v1beta/openai/responses); check the base URL: \
             requests go to the base URL + /responses"
        );
        let route = env_route(Api::Anthropic, "https://proxy.example/api");
        assert_eq!(
            route.not_found_message("not_found_error: Not Found"),
            "not_found_error: Not Found (POST https://proxy.example/api/v1/messages); \
             ANTHROPIC_BASE_URL should be the server's root, without /v1: requests go to \
             ANTHROPIC_BASE_URL + /v1/messages"
        );
        // A missing model is the model's fault, not the URL's.
        assert_eq!(
            route.not_found_message("not_found_error: model: claude-nope"),
            "not_found_error: model: claude-nope (POST https://proxy.example/api/v1/messages)"
        );
        assert_eq!(
            env_route(Api::Anthropic, "http://127.0.0.1:1").connect_message("tcp connect error"),
            "cannot connect to http://127.0.0.1:1/v1/messages: tcp connect error; is the server \
             running, and is ANTHROPIC_BASE_URL right?"
        );
    }

    #[test]
    fn shown_urls_drop_credentials_and_queries() {
        assert_eq!(
            shown("https://user:secret@host.example:8443/v1/x?key=k#frag"),
            "https://host.example:8443/v1/x"
        );
        assert_eq!(shown("http://host"), "http://host");
        assert_eq!(shown("not a url?x"), "not a url");
        assert!(has_version("https://a.example/v1"));
        assert!(has_version("https://a.example/api/v1beta/openai"));
        assert!(!has_version("https://a.example"));
        assert!(!has_version("https://v1.example/api"));
        assert!(!has_version("https://a.example/vision"));
    }
}
