//! A typed view of the item `#[derive(Kit)]` is on.

use heck::ToSnakeCase;
use syn::{Data, DeriveInput, Generics, Ident, Token};

use crate::attr::{self, Attrs};
use crate::ctxt::Ctxt;

/// What kind of item the derive is on.
pub(crate) enum Kind {
    Struct,
    Enum(Token![enum]),
    Union(Token![union]),
}

/// The derive's input.
pub(crate) struct Input<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) generics: &'a Generics,
    pub(crate) kind: Kind,
    pub(crate) attrs: Attrs<'a>,
}

impl<'a> Input<'a> {
    /// Reads `node`, recording attribute problems in `cx`.
    pub(crate) fn from_syn(cx: &mut Ctxt, node: &'a DeriveInput) -> Self {
        let kind = match &node.data {
            Data::Struct(_) => Kind::Struct,
            Data::Enum(data) => Kind::Enum(data.enum_token),
            Data::Union(data) => Kind::Union(data.union_token),
        };
        Input {
            ident: &node.ident,
            generics: &node.generics,
            kind,
            attrs: attr::get(cx, &node.attrs),
        }
    }

    /// The path generated code names the `skillkit` crate by.
    pub(crate) fn krate(&self) -> syn::Path {
        self.attrs
            .krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::skillkit))
    }

    /// The kit name: `name = "…"`, else the struct name in snake_case.
    pub(crate) fn kit_name(&self) -> String {
        match &self.attrs.name {
            Some(name) => name.value(),
            None => self.ident.to_string().to_snake_case(),
        }
    }
}
