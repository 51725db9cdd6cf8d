//! STRUCT fields. A field is read as a column of its own ([`crate::struct_fields`]),
//! so the one form here, `struct_extract(s, 'f')`, is read by the parser as `s.f`
//! (the binder rejects other arguments: a STRUCT is not a value the back ends
//! compute on).

use super::{NullBehavior, Registry};

pub(super) fn register(r: &mut Registry) {
    r.function("struct_extract").form(
        "struct_extract(s, 'f')",
        NullBehavior::DecidesItself,
        "the field f of the STRUCT s, as s.f and s['f'] read it (NULL where s is NULL); f must be a quoted name",
    );
}
