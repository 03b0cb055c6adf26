//! The capabilities a program may call, as the tree of namespaces it sees:
//! `records.lookup` is the capability `lookup` in the namespace `records`,
//! `github.pulls.list` the capability `list` in `github.pulls`.
//!
//! The tree is built once per catalog and shared, read-only, by every
//! execution: a program's namespace and capability values point into it,
//! so an execution builds nothing for the catalog, however large. (Built
//! per execution, the 1,223 capabilities of the GitHub manifest cost about
//! half a millisecond before the program's first instruction.)

use crate::value::Value;

/// The capability tree of a catalog.
#[derive(Debug, Default)]
pub struct Capabilities {
    /// The roots (first segments), under a nameless namespace.
    top: Namespace,
}

/// A namespace: the capabilities and namespaces under a dotted prefix.
#[derive(Debug, Default)]
pub struct Namespace {
    /// The dotted prefix, e.g. `records` or `github.pulls`.
    pub path: Box<str>,
    /// Attribute names in sorted order with what they name.
    pub members: Vec<(Box<str>, Member)>,
}

/// What an attribute of a namespace names.
#[derive(Debug)]
pub enum Member {
    Namespace(Namespace),
    Capability(Capability),
}

/// A callable capability.
#[derive(Debug)]
pub struct Capability {
    /// The dotted name, e.g. `records.lookup`.
    pub name: Box<str>,
}

impl Capabilities {
    /// The tree of the dotted `names`. A name without a dot names no
    /// capability and is skipped; duplicates count once. Where a
    /// capability's name is also a prefix of longer names (`a.b` and
    /// `a.b.c`, which catalogs reject), the capability wins.
    pub fn new<'n>(names: impl IntoIterator<Item = &'n str>) -> Capabilities {
        let mut sorted: Vec<&str> = names.into_iter().collect();
        sorted.sort_unstable();
        sorted.dedup();
        let mut top = Namespace::default();
        for full in sorted {
            let segments: Vec<&str> = full.split('.').collect();
            if segments.len() < 2 {
                continue;
            }
            let mut ns = &mut top;
            let mut prefix_len = 0;
            for (k, &segment) in segments.iter().enumerate() {
                prefix_len += segment.len() + usize::from(k > 0);
                let i = match ns.find(segment) {
                    Ok(i) => i,
                    Err(i) => {
                        let member = if k + 1 == segments.len() {
                            Member::Capability(Capability { name: full.into() })
                        } else {
                            Member::Namespace(Namespace {
                                path: full[..prefix_len].into(),
                                members: Vec::new(),
                            })
                        };
                        ns.members.insert(i, (segment.into(), member));
                        i
                    }
                };
                ns = match &mut ns.members[i].1 {
                    Member::Namespace(child) => child,
                    Member::Capability(_) => break,
                };
            }
        }
        Capabilities { top }
    }

    /// The root names, sorted: the names a program sees predeclared.
    pub fn root_names(&self) -> Vec<&str> {
        self.top.members.iter().map(|(n, _)| &**n).collect()
    }

    /// The values of the roots, in [`Capabilities::root_names`]' order.
    pub fn root_values(&self) -> Vec<Value<'_>> {
        self.top.members.iter().map(|(_, m)| m.value()).collect()
    }

    /// The number of capabilities.
    pub fn len(&self) -> usize {
        self.top.count()
    }

    /// Whether there is no capability.
    pub fn is_empty(&self) -> bool {
        self.top.members.is_empty()
    }
}

impl Namespace {
    fn find(&self, name: &str) -> Result<usize, usize> {
        self.members.binary_search_by(|(n, _)| (**n).cmp(name))
    }

    /// The attribute `name`.
    pub fn attr(&self, name: &str) -> Option<Value<'_>> {
        self.find(name).ok().map(|i| self.members[i].1.value())
    }

    /// The attribute names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|(n, _)| &**n)
    }

    fn count(&self) -> usize {
        self.members
            .iter()
            .map(|(_, m)| match m {
                Member::Namespace(ns) => ns.count(),
                Member::Capability(_) => 1,
            })
            .sum()
    }
}

impl Member {
    /// The program's value for it.
    pub fn value(&self) -> Value<'_> {
        match self {
            Member::Namespace(ns) => Value::Namespace(ns),
            Member::Capability(c) => Value::Capability(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr<'c>(v: Value<'c>, name: &str) -> Value<'c> {
        match v {
            Value::Namespace(ns) => ns.attr(name).expect(name),
            _ => panic!("{name} of a non-namespace"),
        }
    }

    #[test]
    fn builds_sorted_namespaces_with_their_paths() {
        let caps = Capabilities::new([
            "github.pulls.list",
            "records.search",
            "github.repos.get",
            "records.lookup",
            "records.lookup",
            "nodot",
            "github.pulls.get",
        ]);
        assert_eq!(caps.root_names(), ["github", "records"]);
        assert_eq!(caps.len(), 5);
        let roots = caps.root_values();
        let Value::Namespace(pulls) = attr(roots[0], "pulls") else {
            panic!("pulls is a namespace")
        };
        assert_eq!(&*pulls.path, "github.pulls");
        assert_eq!(pulls.names().collect::<Vec<_>>(), ["get", "list"]);
        match pulls.attr("list") {
            Some(Value::Capability(c)) => assert_eq!(&*c.name, "github.pulls.list"),
            _ => panic!("list is a capability"),
        }
        let Value::Namespace(records) = roots[1] else {
            panic!("records is a namespace")
        };
        assert_eq!(records.names().collect::<Vec<_>>(), ["lookup", "search"]);
        assert!(records.attr("missing").is_none());
    }

    #[test]
    fn members_stay_sorted_by_segment() {
        // `a.b-x` sorts before `a.b.c` as a whole name, after it by segment.
        let caps = Capabilities::new(["a.b-x", "a.b.c", "a.a"]);
        let Value::Namespace(a) = caps.root_values()[0] else {
            panic!("a is a namespace")
        };
        assert_eq!(a.names().collect::<Vec<_>>(), ["a", "b", "b-x"]);
    }

    #[test]
    fn a_capability_shadows_a_deeper_name() {
        let caps = Capabilities::new(["a.b", "a.b.c"]);
        let Value::Namespace(a) = caps.root_values()[0] else {
            panic!("a is a namespace")
        };
        assert!(matches!(a.attr("b"), Some(Value::Capability(c)) if &*c.name == "a.b"));
        assert_eq!(caps.len(), 1);
    }
}
