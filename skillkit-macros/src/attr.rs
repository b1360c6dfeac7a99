//! `#[kit(path = "…", name = "…", crate = "…")]`.

use proc_macro2::TokenTree;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr, Token};

use crate::ctxt::Ctxt;

/// The keys `#[kit(...)]` accepts.
const KEYS: &str = "`path`, `name` and `crate`";

/// What `#[kit(...)]` said.
pub(crate) struct Attrs<'a> {
    /// The first `#[kit(...)]` attribute, for errors about the whole of it.
    pub(crate) attr: Option<&'a Attribute>,
    /// The kit directory, relative to `CARGO_MANIFEST_DIR`.
    pub(crate) path: Option<LitStr>,
    /// The kit name.
    pub(crate) name: Option<LitStr>,
    /// The path of the `skillkit` crate, for crates that re-export it.
    pub(crate) krate: Option<syn::Path>,
    /// Whether some key could not be read (then a missing `path` is not
    /// reported again: it was most likely the misspelt key).
    pub(crate) malformed: bool,
}

/// Reads every `#[kit(...)]` attribute of the input, recording problems in `cx`.
pub(crate) fn get<'a>(cx: &mut Ctxt, attrs: &'a [Attribute]) -> Attrs<'a> {
    let mut found = Attrs {
        attr: None,
        path: None,
        name: None,
        krate: None,
        malformed: false,
    };
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("kit")) {
        found.attr.get_or_insert(attr);
        let parsed = attr.parse_nested_meta(|meta| {
            let key = meta.path.clone();
            if key.is_ident("path") {
                let value = string(&meta)?;
                set(cx, &mut found.path, value, "path");
            } else if key.is_ident("name") {
                let value = string(&meta)?;
                set(cx, &mut found.name, value, "name");
            } else if key.is_ident("crate") {
                let value = string(&meta)?;
                let path = value.parse::<syn::Path>().map_err(|_| {
                    syn::Error::new(
                        value.span(),
                        "`crate` must be a path such as `my_crate::skillkit`: the path under \
                         which your crate re-exports skillkit",
                    )
                })?;
                if found.krate.is_some() {
                    cx.error_spanned_by(&value, "duplicate `crate` in `#[kit(...)]`; keep one");
                }
                found.krate = Some(path);
            } else {
                found.malformed = true;
                cx.error_spanned_by(
                    &key,
                    format!(
                        "unknown `#[kit(...)]` key `{}`; the keys are {KEYS}, as in \
                         `#[kit(path = \"kits/files\", name = \"files\")]`",
                        path_text(&key)
                    ),
                );
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(error) = parsed {
            found.malformed = true;
            cx.error(error);
        }
    }
    found
}

fn set(cx: &mut Ctxt, slot: &mut Option<LitStr>, value: LitStr, key: &str) {
    if slot.is_some() {
        cx.error_spanned_by(
            &value,
            format!("duplicate `{key}` in `#[kit(...)]`; keep one"),
        );
    } else {
        *slot = Some(value);
    }
}

/// The `= "text"` after a key.
fn string(meta: &ParseNestedMeta) -> syn::Result<LitStr> {
    let key = meta
        .path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    let value = meta
        .value()
        .map_err(|_| meta.error(format!("`{key}` takes a value: write `{key} = \"...\"`")))?;
    value.parse::<LitStr>().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("`{key}` must be a string literal: `{key} = \"...\"`"),
        )
    })
}

/// Skips what follows an unknown key (`= value` or `(...)`), so the keys after
/// it are still read.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.input.parse::<Token![=]>()?;
    }
    while !meta.input.is_empty() && !meta.input.peek(Token![,]) {
        meta.input.parse::<TokenTree>()?;
    }
    Ok(())
}

/// A path as written, without the spaces of its token stream.
fn path_text(path: &syn::Path) -> String {
    quote::ToTokens::to_token_stream(path)
        .to_string()
        .replace(' ', "")
}
