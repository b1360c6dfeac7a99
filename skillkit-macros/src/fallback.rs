//! What is emitted when the derive failed: the same impls with no kit data, so
//! the user sees the derive's own errors and not a cascade of "trait not
//! implemented" errors where the struct is used.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Input;
use crate::impls;

/// The impls of a kit that failed to load; their data is never reached, since
/// the crate does not compile.
pub(crate) fn expand(input: &Input) -> TokenStream {
    let body = quote! {
        ::core::unreachable!("`#[derive(Kit)]` failed; see its compile errors")
    };
    impls::embedded(input, &body)
}
