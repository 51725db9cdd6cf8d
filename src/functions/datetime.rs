//! Date and time functions.

use super::Registry;

pub(super) fn register(_r: &mut Registry) {}
