//! The exec credential plugin's answer put in the config in place of `exec`, so kube never
//! runs the plugin itself (see `credential_plugin`); a token that expires comes back as the
//! layer that fetches it again (`credential_refresh`).

use std::time::Duration;

use crate::input::ReadError;

use super::credential_plugin;
use super::credential_refresh::RefreshingToken;

/// Runs the user's exec credential plugin ourselves and puts what it printed in its place, so
/// kube never runs it (see `credential_plugin`). As in kube and client-go, a token, token file,
/// basic auth or auth provider in the same user wins over `exec`, which then never runs.
/// A token that expires comes back as the layer that fetches it again when due.
pub(super) async fn use_plugin_credential(
    config: &mut kube::Config,
    limit: Option<Duration>,
) -> Result<Option<RefreshingToken>, ReadError> {
    let user = &mut config.auth_info;
    let preferred = user.auth_provider.is_some()
        || (user.username.is_some() && user.password.is_some())
        || user.token.is_some()
        || user.token_file.is_some();
    if preferred {
        return Ok(None);
    }
    let Some(exec) = user.exec.take() else {
        return Ok(None);
    };
    let status = credential_plugin::run(&exec, limit).await?;
    let expires = status.expires();
    match (
        status.client_certificate_data,
        status.client_key_data,
        status.token,
    ) {
        // A client certificate lives in the TLS setup: not refreshed (kube does not either).
        (Some(cert), Some(key), _) => {
            use base64::Engine as _;
            let b64 = base64::engine::general_purpose::STANDARD;
            user.client_certificate_data = Some(b64.encode(cert));
            user.client_key_data = Some(b64.encode(key).into());
        }
        (_, _, Some(token)) => match expires {
            Some(expires) => return Ok(Some(RefreshingToken::new(exec, limit, token, expires))),
            None => user.token = Some(token.into()),
        },
        _ => {}
    }
    Ok(None)
}
