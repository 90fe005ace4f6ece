//! TCP tuning profiles (`transport.profile`): named sets of `[transport]`
//! values from a paper's set-up. A profile only fills keys the experiment
//! leaves out: a key given explicitly always wins, then the profile, then
//! the congestion control's own defaults (`CcDecl::defaults`), then the
//! ordinary ones. The resolved config shows every value applied next to
//! the profile's name. Each profile is declared beside the code it tunes
//! and joins `host::PROFILES` (host/mod.rs) with one line.

use super::cc::Fill;

/// What a profile declares of itself.
pub struct ProfileDecl {
    /// Its name (what `transport.profile` gives), doc and source.
    pub about: crate::switch::scheme::About,
    /// `[transport]` keys and the values it fills in.
    pub fills: &'static [(&'static str, Fill)],
}
