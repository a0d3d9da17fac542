//! Provider dialects: the paths, authentication, model lists and error bodies of real
//! OpenAI-compatible providers, imitated in front of a [`super::Script`].
//!
//! A dialect decides, before any rule is consulted, whether a request reaches the
//! script: the route must be the provider's, the credentials must be the ones it
//! expects, and the model must be one it serves. Refusals use each provider's own
//! status and error shape, so vouch's messages are tested against what users see.

use serde_json::json;

use super::reply::{Reply, SCRIPTED_MODEL};

/// Model names the generic dialect lists: the ones vouch's own tests configure.
pub const DEFAULT_MODELS: &[&str] = &[SCRIPTED_MODEL, "scripted", "m"];

/// Which provider the server imitates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// vouch's test server: `/v1`, no authentication, [`DEFAULT_MODELS`] listed but any
    /// model accepted.
    Generic,
    /// OpenAI: `/v1`, `Authorization: Bearer KEY` required (401 otherwise), unknown
    /// models answer 404 "The model `x` does not exist or you do not have access to it."
    OpenAi {
        /// The key the server accepts.
        key: String,
    },
    /// Azure OpenAI: `/openai/deployments/{deployment}/chat/completions?api-version=V`,
    /// `api-key: KEY` header required (401), a missing `api-version` is 404, another
    /// deployment is 404 `DeploymentNotFound`; no model list under the deployment.
    Azure {
        /// The key the server accepts in `api-key`.
        key: String,
        /// The deployment name in the path.
        deployment: String,
        /// The required `api-version` query value.
        api_version: String,
    },
    /// Ollama: `/v1`, no authentication, models listed with their tag (`name:latest`)
    /// and served with or without it; unknown models answer 404
    /// `model "x" not found, try pulling it first`.
    Ollama,
    /// vLLM: `/v1`, `Authorization: Bearer KEY` when started with `--api-key`, unknown
    /// models answer 404 "The model `x` does not exist."
    Vllm {
        /// The key given to `--api-key`, if any.
        key: Option<String>,
    },
    /// llama.cpp server: `/v1` and the same routes without it, no authentication, every
    /// model name accepted (it serves the one it loaded); its model list names
    /// `owned_by: "llamacpp"` and its training length (`meta.n_ctx_train`), and `GET
    /// /props` states the context window (see [`super::Script::context_window`]).
    LlamaCpp,
    /// llama.cpp server while it loads its model: every route, `/v1` or not, answers
    /// 503 `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`.
    LlamaCppLoading,
    /// OpenRouter: `/api/v1`, `Authorization: Bearer KEY` required (401), unknown models
    /// answer 400 "x is not a valid model ID"; `HTTP-Referer` and `X-Title` are
    /// optional attribution headers.
    OpenRouter {
        /// The key the server accepts.
        key: String,
    },
}

/// Which route a request asked for, once the dialect's prefix is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    Chat,
    Models,
    /// llama.cpp's `/props`.
    Props,
    Unknown,
}

/// The dialect's verdict on one request.
pub(crate) enum Gate {
    /// Serve the route (chat requests go to the script).
    Pass(Route),
    /// Refuse with this reply.
    Refuse(Reply),
}

impl Dialect {
    /// The base URL a user configures for this provider on `root`
    /// (`http://127.0.0.1:PORT`).
    pub fn base_url(&self, root: &str) -> String {
        match self {
            Dialect::Azure { deployment, .. } => format!("{root}/openai/deployments/{deployment}"),
            Dialect::OpenRouter { .. } => format!("{root}/api/v1"),
            _ => format!("{root}/v1"),
        }
    }

    fn route(&self, path: &str) -> Route {
        let rest = match self {
            Dialect::Azure { .. } => path
                .strip_prefix("/openai/deployments/")
                .and_then(|r| r.split_once('/').map(|(_, rest)| rest)),
            Dialect::OpenRouter { .. } => path.strip_prefix("/api/v1/"),
            Dialect::LlamaCpp | Dialect::LlamaCppLoading => Some(
                path.strip_prefix("/v1")
                    .unwrap_or(path)
                    .trim_start_matches('/'),
            ),
            _ => path.strip_prefix("/v1/"),
        };
        match rest {
            Some("chat/completions") => Route::Chat,
            Some("models") if !matches!(self, Dialect::Azure { .. }) => Route::Models,
            Some("props") if *self == Dialect::LlamaCpp => Route::Props,
            _ => Route::Unknown,
        }
    }

    /// Checks route, query, credentials and model of one request.
    pub(crate) fn gate(
        &self,
        path: &str,
        query: Option<&str>,
        header: &dyn Fn(&str) -> Option<String>,
        model: Option<&str>,
        models: &[String],
    ) -> Gate {
        let route = self.route(path);
        if *self == Dialect::LlamaCppLoading {
            return Gate::Refuse(Reply::raw(
                503,
                json!({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
                    .to_string(),
            ));
        }
        if route == Route::Unknown {
            return Gate::Pass(route);
        }
        if let Some(reply) = self.refuse_credentials(query, header) {
            return Gate::Refuse(reply);
        }
        if let Dialect::Azure { deployment, .. } = self
            && !path.starts_with(&format!("/openai/deployments/{deployment}/"))
        {
            return Gate::Refuse(azure_error(
                404,
                "DeploymentNotFound",
                "The API deployment for this resource does not exist.",
            ));
        }
        if route == Route::Chat
            && let Some(reply) = self.refuse_model(model.unwrap_or_default(), models)
        {
            return Gate::Refuse(reply);
        }
        Gate::Pass(route)
    }

    fn refuse_credentials(
        &self,
        query: Option<&str>,
        header: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Reply> {
        let bearer =
            |key: &str| header("authorization").as_deref() == Some(&format!("Bearer {key}"));
        match self {
            Dialect::OpenAi { key } if !bearer(key) => Some(openai_error(
                401,
                "invalid_api_key",
                "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
            )),
            Dialect::Vllm { key: Some(key) } if !bearer(key) => Some(Reply::raw(
                401,
                json!({"error": "Unauthorized"}).to_string(),
            )),
            Dialect::OpenRouter { key } if !bearer(key) => Some(Reply::raw(
                401,
                json!({"error": {"message": "No auth credentials found", "code": 401}}).to_string(),
            )),
            Dialect::Azure {
                key, api_version, ..
            } => {
                let version = query
                    .unwrap_or_default()
                    .split('&')
                    .any(|pair| pair == format!("api-version={api_version}"));
                if !version {
                    return Some(azure_error(404, "404", "Resource not found"));
                }
                (header("api-key").as_deref() != Some(key.as_str())).then(|| {
                    azure_error(
                        401,
                        "401",
                        "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.",
                    )
                })
            }
            _ => None,
        }
    }

    fn refuse_model(&self, model: &str, models: &[String]) -> Option<Reply> {
        let known = models.iter().any(|m| m == model);
        match self {
            Dialect::OpenAi { .. } if !known => Some(openai_error(
                404,
                "model_not_found",
                &format!("The model `{model}` does not exist or you do not have access to it."),
            )),
            Dialect::Vllm { .. } if !known => Some(Reply::raw(
                404,
                json!({"object": "error", "message": format!("The model `{model}` does not exist."),
                       "type": "NotFoundError", "param": null, "code": 404})
                .to_string(),
            )),
            Dialect::Ollama if !known && !models.iter().any(|m| m.strip_suffix(":latest") == Some(model)) => {
                Some(Reply::raw(
                    404,
                    json!({"error": {"message": format!("model \"{model}\" not found, try pulling it first"),
                                     "type": "api_error", "param": null, "code": null}})
                    .to_string(),
                ))
            }
            Dialect::OpenRouter { .. } if !known => Some(Reply::raw(
                400,
                json!({"error": {"message": format!("{model} is not a valid model ID"), "code": 400}})
                    .to_string(),
            )),
            _ => None,
        }
    }
}

impl Dialect {
    /// The model list this provider sends for `models`, stating `window` where it does.
    pub(crate) fn models_reply(&self, models: &[String], window: Option<u32>) -> Reply {
        let data: Vec<_> = models
            .iter()
            .map(|id| {
                let mut entry =
                    json!({"id": id, "object": "model", "created": 0, "owned_by": "vouch-testkit"});
                match (self, window) {
                    (Dialect::Vllm { .. }, Some(w)) => entry["max_model_len"] = json!(w),
                    (Dialect::OpenRouter { .. }, Some(w)) => entry["context_length"] = json!(w),
                    (Dialect::LlamaCpp, _) => {
                        entry["owned_by"] = json!("llamacpp");
                        entry["meta"] = json!({"n_ctx_train": 131_072, "n_vocab": 49_152});
                    }
                    _ => {}
                }
                entry
            })
            .collect();
        Reply::raw(200, json!({"object": "list", "data": data}).to_string())
    }

    /// llama.cpp's `/props`, with `n_ctx` when the script states a window.
    pub(crate) fn props_reply(window: Option<u32>) -> Reply {
        let mut settings = json!({"temperature": 0.8, "top_k": 40});
        if let Some(w) = window {
            settings["n_ctx"] = json!(w);
        }
        Reply::raw(
            200,
            json!({"default_generation_settings": settings, "total_slots": 1,
                   "model_path": "/models/loaded.gguf"})
            .to_string(),
        )
    }
}

fn openai_error(status: u16, code: &str, message: &str) -> Reply {
    Reply::raw(
        status,
        json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": code}})
            .to_string(),
    )
}

fn azure_error(status: u16, code: &str, message: &str) -> Reply {
    Reply::raw(
        status,
        json!({"error": {"code": code, "message": message}}).to_string(),
    )
}
