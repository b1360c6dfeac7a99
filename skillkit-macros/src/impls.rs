//! The impls every `#[derive(Kit)]` emits, around the body that reaches the
//! kit: the embedded data when the derive succeeded (`expand`), an
//! unreachable body when it failed (`fallback`).

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Input;

/// The impls of a kit whose `KitData::embedded_kit` body is `kit_body`: the
/// data (`KitData`) and an inherent `embedded_kit()` to reach it. The
/// `KitProvider` impl is skillkit's blanket impl over the user's
/// `EmbeddedKit` impl: there is nothing to forward here, and a missing
/// `EmbeddedKit` impl is reported where the struct is used as a provider, in
/// `KitProvider`'s words (`on_unimplemented`), which say what to write.
pub(crate) fn embedded(input: &Input, kit_body: &TokenStream) -> TokenStream {
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
                <Self as #krate::embed::KitData>::embedded_kit()
            }
        }

        impl #impl_generics #krate::embed::KitData for #ident #ty_generics #where_clause {
            fn embedded_kit() -> &'static #krate::Kit {
                #kit_body
            }
        }
    }
}
