use skillkit::Kit;

#[derive(Kit)]
#[kit(path = "fixtures/kits/files")]
struct Files;

fn main() {
    let _catalog = skillkit::Catalog::builder().provider(Files).build();
}
