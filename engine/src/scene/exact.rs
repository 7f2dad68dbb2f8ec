//! Fixed-length arrays that refuse extra elements: serde's `[T; N]` reads the first N elements
//! of a TOML array and silently drops the rest (`translation = [0, 0, 1, 4]` would load as
//! `[0, 0, 1]`). Used with `#[serde(deserialize_with = "…")]` on every `[T; N]` scene field.

use serde::de::{Deserialize, Deserializer, Error, IgnoredAny, SeqAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;

struct Exact<T, const N: usize>(PhantomData<T>);

impl<'de, T: Deserialize<'de> + Copy + Default, const N: usize> Visitor<'de> for Exact<T, N> {
    type Value = [T; N];

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of {N} numbers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[T; N], A::Error> {
        let mut out = [T::default(); N];
        for (k, slot) in out.iter_mut().enumerate() {
            *slot = seq
                .next_element()?
                .ok_or_else(|| A::Error::invalid_length(k, &self))?;
        }
        let mut len = N;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            len += 1;
        }
        if len > N {
            return Err(A::Error::invalid_length(len, &self));
        }
        Ok(out)
    }
}

/// An array of exactly N elements.
pub(super) fn array<'de, D, T, const N: usize>(d: D) -> Result<[T; N], D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Copy + Default,
{
    d.deserialize_seq(Exact::<T, N>(PhantomData))
}

struct OptionalExact<T, const N: usize>(PhantomData<T>);

impl<'de, T: Deserialize<'de> + Copy + Default, const N: usize> Visitor<'de>
    for OptionalExact<T, N>
{
    type Value = Option<[T; N]>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of {N} numbers")
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        array(d).map(Some)
    }

    fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// An optional array of exactly N elements (use with `#[serde(default)]`).
pub(super) fn optional_array<'de, D, T, const N: usize>(d: D) -> Result<Option<[T; N]>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Copy + Default,
{
    d.deserialize_option(OptionalExact::<T, N>(PhantomData))
}
