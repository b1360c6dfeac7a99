// Implementing only the legacy `load_kits` does not satisfy the trait:
// `list_kits` is the one required method.
use skillkit::{Kit, KitProvider, ProviderError};

struct Legacy;

#[skillkit::async_trait]
impl KitProvider for Legacy {
    #[allow(deprecated)]
    async fn load_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        Ok(Vec::new())
    }
}

fn main() {}
