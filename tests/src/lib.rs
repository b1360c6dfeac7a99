//! Integration tests live as [[test]] targets.
