//! The watch where it cannot be exact (every platform but Linux): off, so
//! every query walks the folder.

use std::path::Path;

#[cfg(feature = "__test-hooks")]
use super::WatchFault;
use super::{Changes, WatchStatus};

/// No watch: every query walks.
pub(in crate::providers::local) struct Watch;

impl Watch {
    pub(in crate::providers::local) fn new(_dir: &Path, _each: bool, _enabled: bool) -> Watch {
        Watch
    }

    pub(in crate::providers::local) fn changes(&self, _provider: &str) -> Changes {
        Changes::everything()
    }

    pub(in crate::providers::local) fn quiet(&self) -> bool {
        false
    }

    pub(in crate::providers::local) fn after(&self, _ok: bool) {}

    pub(in crate::providers::local) fn status(&self) -> WatchStatus {
        WatchStatus::Off
    }

    pub(in crate::providers::local) fn wait_set_up(&self, _timeout: std::time::Duration) {}

    #[cfg(feature = "__test-hooks")]
    pub(in crate::providers::local) fn simulate(&self, _fault: WatchFault) {}
}
