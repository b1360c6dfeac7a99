use skillkit::{Kit, KitProvider, ProviderError};

#[derive(Kit)]
#[kit(path = "fixtures/kits/files")]
struct Files;

impl skillkit::EmbeddedKit for Files {
    async fn kits(&self) -> Result<Vec<skillkit::Kit>, ProviderError> {
        Ok(vec![Self::embedded_kit().clone()])
    }
}

fn main() {
    let _catalog = skillkit::Catalog::builder().provider(Files).build();
    let _ = Files.name();
}
