//! What the command logs and exports: log lines on stderr when `RUST_LOG`
//! is set, and the agent's traces and metrics over OTLP when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
//! is, configured by the other standard `OTEL_*` variables.

use std::io::IsTerminal;

use skillkit::telemetry::Otel;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Sets up logging and export for the whole process; the export, to keep
/// until the command ends (dropping it sends what is left).
pub fn start() -> Option<Otel> {
    let logs = std::env::var_os("RUST_LOG").is_some().then(|| {
        tracing_subscriber::fmt::layer()
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(std::io::stderr)
            .with_filter(EnvFilter::from_default_env())
    });
    let wanted = [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
        && !std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
    let otel = match wanted.then(Otel::from_env) {
        Some(Ok(otel)) => Some(otel),
        Some(Err(error)) => {
            crate::output::err!("warning: {error}; no traces are exported");
            None
        }
        None => None,
    };
    // Only SkillKit's spans and events go to the exporter (not every
    // dependency's debug lines).
    let export = otel.as_ref().map(|otel| {
        otel.layer()
            .with_filter(EnvFilter::new("skill_kit=info,skillkit=info"))
    });
    if logs.is_some() || export.is_some() {
        let _ = tracing_subscriber::registry()
            .with(logs)
            .with(export)
            .try_init();
    }
    otel
}
