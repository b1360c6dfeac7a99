//! Code generation: the embedded data, the `KitProvider` and `Tool` impls that
//! delegate to the user's `EmbeddedKit` impl, and the one check that it exists.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::{DeriveInput, WhereClause, parse_quote};

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
            let mut tokens = impls(&input, &body);
            tokens.extend(assert_completed(&input));
            tokens
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

/// The impls of a kit whose `Embedded::embedded_kit` body is `kit_body`.
///
/// The `KitProvider` and `Tool` impls (and `agent_definition`) call the user's
/// `EmbeddedKit` impl. For a plain struct they hold whether or not that impl
/// exists: the call goes through `__private::Probe`, which finds the user's impl
/// by autoref, so a missing impl is reported once, by [`assert_completed`],
/// and not again where the kit is used. A generic struct cannot be probed
/// (its type is not concrete here), so its impls are bounded by
/// `Self: EmbeddedKit` instead.
pub(crate) fn impls(input: &Input, kit_body: &TokenStream) -> TokenStream {
    let krate = input.krate();
    let p = quote!(#krate::__private);
    let ident = input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let generic = !input.generics.params.is_empty();
    let mut completed: WhereClause = where_clause.cloned().unwrap_or_else(|| parse_quote!(where));
    if generic {
        completed
            .predicates
            .push(parse_quote!(Self: #krate::EmbeddedKit));
    }
    // What a generated method calls: `#via name(self, …)`.
    let via = if generic {
        quote!(<Self as #krate::EmbeddedKit>::)
    } else {
        quote!(Self::__skillkit_dispatch().)
    };
    let dispatch = (!generic).then(|| {
        quote! {
            #[doc(hidden)]
            fn __skillkit_dispatch() -> &'static dyn #p::Dispatch<Self> {
                #[allow(unused_imports)]
                use #p::{Completed as _, NotCompleted as _};
                (&&#p::Probe::<Self>::NEW).dispatch()
            }
        }
    });
    let kit_name = input.kit_name();
    let kit_doc = format!("The kit `{kit_name}` compiled in by `#[derive(Kit)]`.");
    quote! {
        #[allow(dead_code)]
        impl #impl_generics #ident #ty_generics #where_clause {
            #[doc = #kit_doc]
            pub fn embedded_kit() -> &'static #krate::Kit {
                <Self as #krate::embed::Embedded>::embedded_kit()
            }

            #dispatch
        }

        #[allow(dead_code)]
        impl #impl_generics #ident #ty_generics #completed {
            /// The kit's root agent, parsed from `AGENT.md` (see
            /// `EmbeddedKit::agent_definition`).
            pub fn agent_definition(&self) -> ::core::option::Option<&#krate::AgentDefinition> {
                #via agent_definition(self)
            }
        }

        impl #impl_generics #krate::embed::Embedded for #ident #ty_generics #where_clause {
            fn embedded_kit() -> &'static #krate::Kit {
                #kit_body
            }
        }

        #[#krate::async_trait]
        impl #impl_generics #krate::KitProvider for #ident #ty_generics #completed {
            fn name(&self) -> ::std::borrow::Cow<'_, str> {
                #via name(self)
            }

            async fn list_kits(
                &self,
            ) -> ::core::result::Result<::std::vec::Vec<#krate::Kit>, #krate::ProviderError> {
                #via list_kits(self).await
            }

            async fn get_kit(
                &self,
                name: &str,
            ) -> ::core::result::Result<::core::option::Option<#krate::Kit>, #krate::ProviderError> {
                #via get_kit(self, name).await
            }

            #[allow(deprecated)]
            async fn load_kits(
                &self,
            ) -> ::core::result::Result<::std::vec::Vec<#krate::Kit>, #krate::ProviderError> {
                #via load_kits(self).await
            }

            fn tool(
                self: ::std::sync::Arc<Self>,
            ) -> ::core::option::Option<::std::sync::Arc<dyn #krate::Tool>> {
                #via tool(self)
            }
        }

        #[#krate::async_trait]
        impl #impl_generics #krate::Tool for #ident #ty_generics #completed {
            fn definition(&self, skill: &#krate::Skill) -> #krate::ToolDefinition {
                #via definition(self, skill)
            }

            async fn execute(&self, execution: #krate::ToolExecution) -> #krate::ToolOutcome {
                #via execute(self, execution).await
            }

            async fn resume(
                &self,
                execution: #krate::ToolExecution,
                state: #p::Value,
                decision: #p::Value,
            ) -> #krate::ToolOutcome {
                #via resume(self, execution, state, decision).await
            }
        }
    }
}

/// The single check that the user completed the kit: without an `EmbeddedKit`
/// impl it is one error, pointed at the struct, saying what to write. (A generic
/// struct cannot be checked without its parameters; its uses are.)
fn assert_completed(input: &Input) -> TokenStream {
    if !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let krate = input.krate();
    let ident = input.ident;
    quote_spanned! {ident.span()=>
        const _: () = {
            fn completed<T: ?::core::marker::Sized + #krate::EmbeddedKit>() {}
            let _ = completed::<#ident>;
        };
    }
}
