//! [`Otel`]: the OTLP export of the agent's spans and the GenAI metrics,
//! configured by the standard `OTEL_*` variables.

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{Aggregation, Instrument, SdkMeterProvider, Stream};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::trace::SpanData;
use tracing_subscriber::Layer;
use tracing_subscriber::registry::LookupSpan;

/// The buckets of `gen_ai.client.token.usage`, as the conventions advise.
const TOKEN_BUCKETS: &[f64] = &[
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// The buckets of `gen_ai.client.operation.duration` (seconds), as the
/// conventions advise.
const DURATION_BUCKETS: &[f64] = &[
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// Why the export could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` names a protocol SkillKit cannot speak.
    #[error(
        "OTEL_EXPORTER_OTLP_PROTOCOL is `{0}`; SkillKit exports with `http/protobuf` (the \
         default) or `grpc`"
    )]
    Protocol(String),
    /// The exporter could not be built (a bad endpoint or header).
    #[error("the OTLP exporter could not be set up: {0}")]
    Exporter(String),
}

/// The OTLP export of traces and metrics: a `tracing` layer to add to the
/// application's subscriber, and the providers behind it, flushed when it
/// is dropped (or at [`shutdown`](Otel::shutdown)).
///
/// Everything comes from the standard variables:
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (and the `_TRACES_`/`_METRICS_` ones),
/// `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the default, or
/// `grpc`), `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`,
/// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`.
///
/// ```no_run
/// use tracing_subscriber::layer::SubscriberExt;
/// use tracing_subscriber::util::SubscriberInitExt;
/// let otel = skillkit::telemetry::Otel::from_env().unwrap();
/// tracing_subscriber::registry().with(otel.layer()).init();
/// // … run agents; their spans and metrics are exported …
/// otel.shutdown();
/// ```
#[derive(Debug)]
pub struct Otel {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
    /// gRPC's own runtime (tonic's connections live on one), when the
    /// protocol is `grpc`.
    grpc: Option<tokio::runtime::Runtime>,
}

impl Otel {
    /// The export the `OTEL_*` variables describe.
    pub fn from_env() -> Result<Otel, OtelError> {
        let protocol = std::env::var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|_| std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .unwrap_or_else(|_| "http/protobuf".to_owned());
        let exporter_error =
            |e: opentelemetry_otlp::ExporterBuildError| OtelError::Exporter(e.to_string());
        let resource = Resource::builder().build();
        let tracer = SdkTracerProvider::builder().with_resource(resource.clone());
        let meter = SdkMeterProvider::builder().with_resource(resource);
        let (tracer, meter, grpc) = match protocol.trim() {
            "http/protobuf" | "" => (
                tracer.with_batch_exporter(
                    SpanExporter::builder()
                        .with_http()
                        .with_protocol(Protocol::HttpBinary)
                        .build()
                        .map_err(exporter_error)?,
                ),
                meter.with_periodic_exporter(
                    MetricExporter::builder()
                        .with_http()
                        .with_protocol(Protocol::HttpBinary)
                        .build()
                        .map_err(exporter_error)?,
                ),
                None,
            ),
            // tonic's channels live on a Tokio runtime: one of the export's
            // own, on which each export is run.
            "grpc" => {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("skillkit-otlp-grpc")
                    .enable_all()
                    .build()
                    .map_err(|e| OtelError::Exporter(e.to_string()))?;
                let handle = runtime.handle().clone();
                let (spans, metrics) = {
                    let _inside = runtime.enter();
                    let spans = SpanExporter::builder()
                        .with_tonic()
                        .build()
                        .map_err(exporter_error)?;
                    let metrics = MetricExporter::builder()
                        .with_tonic()
                        .build()
                        .map_err(exporter_error)?;
                    (spans, metrics)
                };
                (
                    tracer.with_batch_exporter(OnRuntime {
                        inner: spans,
                        runtime: handle.clone(),
                    }),
                    meter.with_periodic_exporter(OnRuntime {
                        inner: metrics,
                        runtime: handle,
                    }),
                    Some(runtime),
                )
            }
            other => return Err(OtelError::Protocol(other.to_owned())),
        };
        let tracer = tracer.build();
        let meter = meter
            .with_view(|instrument: &Instrument| {
                let buckets = match instrument.name() {
                    "gen_ai.client.token.usage" => TOKEN_BUCKETS,
                    "gen_ai.client.operation.duration" => DURATION_BUCKETS,
                    _ => return None,
                };
                Stream::builder()
                    .with_aggregation(Aggregation::ExplicitBucketHistogram {
                        boundaries: buckets.to_vec(),
                        record_min_max: true,
                    })
                    .build()
                    .ok()
            })
            .build();
        Ok(Otel {
            tracer,
            meter,
            grpc,
        })
    }

    /// The `tracing` layer that turns spans into OTel spans (the GenAI ones
    /// named as the conventions say) and the metric events into the GenAI
    /// histograms.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        let tracer = self.tracer.tracer("skillkit");
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_error_records_to_exceptions(true)
            // The GenAI attributes, not the bridge's own (busy and idle
            // time, source location, thread, target).
            .with_tracked_inactivity(false)
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .and_then(tracing_opentelemetry::MetricsLayer::new(self.meter.clone()))
    }

    /// Sends what is left and stops the exporters.
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for Otel {
    fn drop(&mut self) {
        let _ = self.tracer.force_flush();
        let _ = self.meter.force_flush();
        let _ = self.tracer.shutdown();
        let _ = self.meter.shutdown();
        // Without waiting: this may be dropped inside another runtime.
        if let Some(runtime) = self.grpc.take() {
            runtime.shutdown_background();
        }
    }
}

/// An exporter whose exports run on `runtime` (they are called from the
/// SDK's own export thread, outside any runtime).
#[derive(Debug)]
struct OnRuntime<E> {
    inner: E,
    runtime: tokio::runtime::Handle,
}

impl<E: opentelemetry_sdk::trace::SpanExporter> opentelemetry_sdk::trace::SpanExporter
    for OnRuntime<E>
{
    fn export(
        &self,
        batch: Vec<SpanData>,
    ) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        std::future::ready(self.runtime.block_on(self.inner.export(batch)))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let _inside = self.runtime.enter();
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        let _inside = self.runtime.enter();
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: PushMetricExporter> PushMetricExporter for OnRuntime<E> {
    fn export(
        &self,
        metrics: &ResourceMetrics,
    ) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        std::future::ready(self.runtime.block_on(self.inner.export(metrics)))
    }

    fn force_flush(&self) -> OTelSdkResult {
        let _inside = self.runtime.enter();
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let _inside = self.runtime.enter();
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}
