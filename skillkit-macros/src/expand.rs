//! Code generation: the embedded data. Everything else an embedded kit is
//! (its `KitProvider`, its tool) comes from skillkit's blanket impl over the
//! user's `EmbeddedKit` impl.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::ast::Input;
use crate::ctxt::Ctxt;
use crate::{data, fallback, valid};

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
            impls(&input, &body)
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

/// The impls of a kit whose `Embedded::embedded_kit` body is `kit_body`: the
/// data (`Embedded`) and an inherent `embedded_kit()` to reach it. The
/// `KitProvider` impl is skillkit's blanket impl over the user's
/// `EmbeddedKit` impl: there is nothing to forward here, and a missing
/// `EmbeddedKit` impl is reported where the struct is used as a provider, in
/// `KitProvider`'s words (`on_unimplemented`), which say what to write.
pub(crate) fn impls(input: &Input, kit_body: &TokenStream) -> TokenStream {
    let krate = input.krate();
    let ident = input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let kit_name = input.kit_name();
    let kit_doc = format!("The kit `{kit_name}` compiled in by `#[derive(Kit)]`.");
    quote! {
        #[allow(dead_code)]
        impl #impl_generics #ident #ty_generics #where_clause {
            #[doc = #kit_doc]
            pub fn embedded_kit() -> &'static #krate::Kit {
                <Self as #krate::embed::Embedded>::embedded_kit()
            }
        }

        impl #impl_generics #krate::embed::Embedded for #ident #ty_generics #where_clause {
            fn embedded_kit() -> &'static #krate::Kit {
                #kit_body
            }
        }
    }
}
