// A provider must answer `list_kits`: an empty impl does not compile (the
// legacy `load_kits` is not a second way to satisfy the trait).
struct Nothing;

#[skillkit::async_trait]
impl skillkit::KitProvider for Nothing {}

fn main() {}
