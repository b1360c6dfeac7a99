//! Code generation: the embedded data, put in the impls of `impls`.
//! Everything else an embedded kit is (its `KitProvider`, its tool) comes
//! from skillkit's blanket impl over the user's `EmbeddedKit` impl.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::ast::Input;
use crate::ctxt::Ctxt;
use crate::{data, fallback, impls, valid};

/// The whole expansion of `#[derive(Kit)]` on `node`: the impls, or every error
/// found plus the fallback impls.
pub(crate) fn derive(node: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let input = Input::from_syn(&mut cx, node);
    let kit = valid::check(&mut cx, &input);
    match (cx.check(), kit) {
        (Ok(()), Some(kit)) => {
            let krate = input.krate();
            let data = data::kit(&krate, &kit);
            let files = kit.files.iter().map(|f| f.display().to_string());
            let body = quote! {
                // One `include_bytes!` per file, so editing any of them rebuilds.
                #(const _: &[u8] = ::core::include_bytes!(#files);)*
                static DATA: #krate::__private::KitData = #data;
                static KIT: #krate::__private::LazyLock<#krate::Kit> =
                    #krate::__private::LazyLock::new(|| #krate::__private::build_kit(&DATA));
                &KIT
            };
            impls::embedded(&input, &body)
        }
        (Err(errors), _) => {
            let mut tokens = errors.to_compile_error();
            tokens.extend(fallback::expand(&input));
            tokens
        }
        // `check` returns no kit only after recording why.
        (Ok(()), None) => fallback::expand(&input),
    }
}
