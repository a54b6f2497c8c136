//! Names in the AST: a [`Name`] is an interned string with its span; [`NameTable`] interns
//! each distinct text once per module, and [`NameMemo`] caches a value per interned name.
//!
//! In: identifier texts from the lexer. Out: [`Name`]s that compare by their interned id.
//! Invariant: two names are equal exactly when their texts are.

use super::*;

/// One entry per distinct name text of a module, indexed by [`Name::id`] (the parser gives
/// ids in order of first appearance). The checker and the IR builder key their scopes by id,
/// so a name is hashed once, when it is parsed, instead of at every lookup.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NameTable {
    /// By id: the name split as [`crate::ptx::check::split_numbered`] splits its text
    /// (`%rd12` → the id of `%rd` and 12, for `%rd<N>` declarations), `None` where it does not
    /// split. The prefix is itself a name of the table.
    pub numbered: Vec<Option<(u32, u32)>>,
}

/// What a lookup found for each name of a module (by [`Name::id`]), remembered until what
/// names mean can change: the checker and the IR builder resolve the same registers again
/// and again in the same scopes, and a remembered answer is one slot read instead of a walk
/// over the scopes' maps. [`NameMemo::forget`] (a declaration, a scope entered or left)
/// makes every remembered answer stale at once, by starting a new epoch.
#[derive(Clone, Debug)]
pub struct NameMemo<T> {
    /// By id: the answer and the epoch it was found in.
    pub(super) slots: Vec<(u64, T)>,
    pub(super) epoch: u64,
}

/// A name as written, with where it was written.
#[derive(Clone, Debug)]
pub struct Name {
    pub text: NameText,
    pub span: Span,
    /// The same for every name of the module with the same text, different for different
    /// texts: an index into the module's [`NameTable`].
    pub id: u32,
}

/// The text of a [`Name`], shared: the parser makes one per distinct text of a module and
/// every name with that text holds it, so a name costs a reference count instead of an
/// allocation and a copy of its bytes (a 4 MB file has about 200,000 names). Reads as a
/// `str` (`Deref`, comparisons with `str` and `String`); `Debug` and `Display` print what
/// the `str` prints.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameText(Arc<str>);

impl NameTable {
    /// How many distinct names (every id is below this).
    pub fn len(&self) -> usize {
        self.numbered.len()
    }

    pub fn is_empty(&self) -> bool {
        self.numbered.is_empty()
    }

    /// [`NameTable::numbered`] of a name.
    pub fn numbered(&self, n: &Name) -> Option<(u32, u32)> {
        self.numbered.get(n.id as usize).copied().flatten()
    }
}

impl<T: Copy> NameMemo<T> {
    /// A memo for the `names` of a module, remembering nothing (`empty` fills the slots).
    pub fn new(names: &NameTable, empty: T) -> Self {
        NameMemo {
            slots: vec![(0, empty); names.len()],
            epoch: 1,
        }
    }

    /// What was remembered for `n` in the current epoch.
    pub fn get(&self, n: &Name) -> Option<T> {
        match self.slots.get(n.id as usize) {
            Some(&(e, v)) if e == self.epoch => Some(v),
            _ => None,
        }
    }

    /// Remember `v` for `n` until the next [`NameMemo::forget`].
    pub fn put(&mut self, n: &Name, v: T) {
        if let Some(slot) = self.slots.get_mut(n.id as usize) {
            *slot = (self.epoch, v);
        }
    }

    /// What names mean may have changed: forget every answer.
    pub fn forget(&mut self) {
        self.epoch += 1;
    }
}

/// Text and place: the id follows from the text within a module (and is not comparable
/// across modules, as after printing and parsing again).
impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.text == other.text && self.span == other.span
    }
}

impl Eq for Name {}

impl NameText {
    pub fn new(text: &str) -> NameText {
        NameText(Arc::from(text))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for NameText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for NameText {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for NameText {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for NameText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for NameText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl PartialEq<str> for NameText {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for NameText {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for NameText {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<NameText> for str {
    fn eq(&self, other: &NameText) -> bool {
        *self == *other.0
    }
}

impl PartialEq<NameText> for &str {
    fn eq(&self, other: &NameText) -> bool {
        **self == *other.0
    }
}

impl PartialEq<NameText> for String {
    fn eq(&self, other: &NameText) -> bool {
        **self == *other.0
    }
}
