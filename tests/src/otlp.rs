//! An OTLP/HTTP receiver on 127.0.0.1: what an exporter sends to
//! `/v1/traces` and `/v1/metrics`, decoded with the official protobuf
//! definitions (`opentelemetry-proto`), kept for the test to read as plain
//! spans and metrics.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::metric;
use prost::Message;

/// An attribute's value, as typed on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Double(f64),
    Bool(bool),
    Strings(Vec<String>),
    Other,
}

impl Value {
    /// The text of a string value.
    pub fn str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// One span as received.
#[derive(Debug, Clone)]
pub struct Span {
    pub name: String,
    pub kind: i32,
    pub trace_id: Vec<u8>,
    pub span_id: Vec<u8>,
    pub parent_span_id: Vec<u8>,
    pub attributes: BTreeMap<String, Value>,
    /// The status code (0 unset, 1 ok, 2 error).
    pub status: i32,
    /// The resource's attributes.
    pub resource: BTreeMap<String, Value>,
}

impl Span {
    /// The attribute `key`, or a panic naming the span.
    pub fn attr(&self, key: &str) -> &Value {
        self.attributes
            .get(key)
            .unwrap_or_else(|| panic!("span `{}` has no `{key}`: {:?}", self.name, self.attributes))
    }
}

/// One histogram as received: its name, the bucket boundaries and each data
/// point's attributes and count.
#[derive(Debug, Clone)]
pub struct Histogram {
    pub name: String,
    pub bounds: Vec<f64>,
    pub points: Vec<(BTreeMap<String, Value>, u64, f64)>,
}

#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    histograms: Vec<Histogram>,
    /// The headers of each export over HTTP.
    headers: Vec<axum::http::HeaderMap>,
}

/// The receiver: its base URL for `OTEL_EXPORTER_OTLP_ENDPOINT`.
pub struct Receiver {
    pub url: String,
    received: Arc<Mutex<Received>>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Received::default()));
        let app = axum::Router::new()
            .route("/v1/traces", axum::routing::post(traces))
            .route("/v1/metrics", axum::routing::post(metrics))
            .with_state(Arc::clone(&received));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { url, received }
    }

    pub fn spans(&self) -> Vec<Span> {
        self.received.lock().unwrap().spans.clone()
    }

    pub fn histograms(&self) -> Vec<Histogram> {
        self.received.lock().unwrap().histograms.clone()
    }

    /// The values of header `name` of the exports received over HTTP.
    pub fn header(&self, name: &str) -> Vec<String> {
        self.received
            .lock()
            .unwrap()
            .headers
            .iter()
            .filter_map(|h| h.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned))
            .collect()
    }
}

async fn traces(
    State(received): State<Arc<Mutex<Received>>>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> StatusCode {
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return StatusCode::BAD_REQUEST;
    };
    received.lock().unwrap().headers.push(headers);
    keep_spans(&received, request);
    StatusCode::OK
}

/// The receiver of OTLP over gRPC: the collector's trace service.
struct Grpc(Arc<Mutex<Received>>);

#[tonic::async_trait]
impl opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::TraceService for Grpc {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<
        tonic::Response<
            opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse,
        >,
        tonic::Status,
    > {
        keep_spans(&self.0, request.into_inner());
        Ok(tonic::Response::new(Default::default()))
    }
}

impl Receiver {
    /// A receiver of OTLP over gRPC (traces only), for
    /// `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`.
    pub async fn start_grpc() -> Receiver {
        use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::TraceServiceServer;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Received::default()));
        let service = TraceServiceServer::new(Grpc(Arc::clone(&received)));
        let incoming = tonic::transport::server::TcpIncoming::from(listener);
        tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(incoming)
                .await
        });
        Receiver { url, received }
    }
}

fn keep_spans(received: &Mutex<Received>, request: ExportTraceServiceRequest) {
    let mut received = received.lock().unwrap();
    for resource_spans in request.resource_spans {
        let resource = resource_spans
            .resource
            .map(|r| attributes(r.attributes))
            .unwrap_or_default();
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                received.spans.push(Span {
                    name: span.name,
                    kind: span.kind,
                    trace_id: span.trace_id,
                    span_id: span.span_id,
                    parent_span_id: span.parent_span_id,
                    attributes: attributes(span.attributes),
                    status: span.status.map_or(0, |s| s.code),
                    resource: resource.clone(),
                });
            }
        }
    }
}

async fn metrics(State(received): State<Arc<Mutex<Received>>>, body: Bytes) -> StatusCode {
    let Ok(request) = ExportMetricsServiceRequest::decode(body) else {
        return StatusCode::BAD_REQUEST;
    };
    let mut received = received.lock().unwrap();
    for resource_metrics in request.resource_metrics {
        for scope in resource_metrics.scope_metrics {
            for metric in scope.metrics {
                let Some(metric::Data::Histogram(histogram)) = metric.data else {
                    continue;
                };
                let bounds = histogram
                    .data_points
                    .first()
                    .map(|p| p.explicit_bounds.clone())
                    .unwrap_or_default();
                let points = histogram
                    .data_points
                    .into_iter()
                    .map(|p| (attributes(p.attributes), p.count, p.sum.unwrap_or(0.0)))
                    .collect();
                received.histograms.push(Histogram {
                    name: metric.name,
                    bounds,
                    points,
                });
            }
        }
    }
    StatusCode::OK
}

fn attributes(
    list: Vec<opentelemetry_proto::tonic::common::v1::KeyValue>,
) -> BTreeMap<String, Value> {
    list.into_iter()
        .map(|kv| (kv.key, value(kv.value)))
        .collect()
}

fn value(value: Option<AnyValue>) -> Value {
    match value.and_then(|v| v.value) {
        Some(any_value::Value::StringValue(s)) => Value::Str(s),
        Some(any_value::Value::IntValue(i)) => Value::Int(i),
        Some(any_value::Value::DoubleValue(d)) => Value::Double(d),
        Some(any_value::Value::BoolValue(b)) => Value::Bool(b),
        Some(any_value::Value::ArrayValue(array)) => Value::Strings(
            array
                .values
                .into_iter()
                .filter_map(|v| match v.value {
                    Some(any_value::Value::StringValue(s)) => Some(s),
                    _ => None,
                })
                .collect(),
        ),
        _ => Value::Other,
    }
}
