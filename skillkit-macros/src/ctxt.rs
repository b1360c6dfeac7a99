//! Collects every error of one derive so they are all reported in one pass
//! (serde's `Ctxt`), instead of stopping at the first.

use std::fmt::Display;

use quote::ToTokens;

/// The errors found so far.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    /// Records `error`.
    pub(crate) fn error(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// Records `message`, pointed at `tokens`.
    pub(crate) fn error_spanned_by(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.error(syn::Error::new_spanned(tokens, message));
    }

    /// All recorded errors as one `syn::Error` (each still its own compile
    /// error), or `Ok` when there were none.
    pub(crate) fn check(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}
