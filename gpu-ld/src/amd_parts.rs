//! amdgcn: code generation in parts that a rebuild can reuse.
//!
//! Why: `llc` on the whole optimized module is most of an AMD link (real-crates
//! on gfx90a: 164 s of a 214 s cold build on two cores), on one core, and a
//! rebuild after editing `main.rs` paid all of it again. Split into parts, the
//! parts compile at once, and a part whose text did not change is not
//! compiled again: its object comes from the link's part cache.
//!
//! For a cached part to be reused, its text must depend only on what it
//! holds, not on the rest of the program. So ([`split`]):
//! - a function or global goes to the part its name hashes to, not to the
//!   lightest part (an edit would move everything after it);
//! - a part declares only the symbols it names, sorted by name;
//! - its attribute groups (`#N`) and metadata nodes (`!N`), numbered for the
//!   whole module, are renumbered from 0 in the order the part uses them;
//! - a local symbol loses the `.llvm.<number>` suffix rustc's ThinLTO
//!   preparation gave it (a hash of its codegen unit, which changes with any
//!   edit of that unit) where the name stays unique: a string constant of
//!   `main.rs` is otherwise renamed in every part that names it;
//! - a local global goes to the part of the first function (by name) that
//!   names it, so that a constant `main.rs` changes is in the part that
//!   changes anyway (a declaration elsewhere would carry its new type);
//! - inline assembly loses its `!srcloc` (a source position `llc` only
//!   prints in its own error messages, which moves with every edit of the
//!   crate that inlined it);
//! - the kernels go alone to part 0, which is compiled last (below);
//! - the rewrites' `alwaysinline` helpers are copied into each part that
//!   names them, local, and each part runs the `always-inline` and
//!   `mergefunc` passes itself: one `opt` over the whole module took 4 s of
//!   every link, and now only the parts that changed pay for theirs.
//!   Identical functions in different parts stay two.
//!
//! What the single module gave and parts must give too: the kernel's register
//! figures. AMD sizes a kernel's register allocation from the call graph in
//! its module; a call to a function of another part is unknown to `llc`,
//! which then counts only its own part's functions. So the other parts are
//! compiled first, the highest VGPR, AGPR and SGPR that their machine code
//! names is read from its disassembly
//! ([`gpu_toolchain::codecheck::registers_named`]), and part 0 is
//! compiled with an empty inline assembly statement at each kernel's entry
//! that clobbers those registers ([`with_register_floor`]). `llc` counts a
//! clobbered register as used, so the kernel allocates what every function
//! it can reach may touch: the figures the whole module gave (real-crates:
//! 140 VGPRs of which 64 AGPRs, 108 SGPRs, checked in `tests/codeobjects.rs`).
//! The kernel's fixed private segment is its own frame; its callees' frames
//! are on the dynamic stack the kernel already had (recursion and indirect
//! calls), whose size the launcher sets.
use std::collections::{HashMap, HashSet};

use gpu_toolchain::codecheck::Registers;

use crate::ir_text::function_name;
use crate::split::{
    Ref, for_each_ref, function_at, function_declaration, global_declaration, global_name, inline_groups, is_always_inline, made_hidden,
    scan,
};

/// Parts a large module is cut into (part 0, the kernels, included). More
/// parts make an edit recompile less, and cost each `llc` the declarations
/// and metadata its part needs: at 32 a part of real-crates is about 1.4 MB
/// of IR, and an edit of `main.rs` rebuilt in 33 to 35 s against 41 s at 16.
pub const PARTS: usize = 32;

/// The kernel calling convention's keyword in a `define` line.
const KERNEL_CC: &str = " amdgpu_kernel ";

enum Item<'a> {
    /// `inline`: a local `alwaysinline` function (the rewrites' helpers),
    /// copied into every part that names it and inlined there.
    Function { name: &'a str, lines: &'a [&'a str], local: bool, kernel: bool, inline: bool },
    Declaration { name: &'a str, line: &'a str },
    Global { name: &'a str, line: &'a str, local: bool, appending: bool },
}

/// The module cut into `parts` LLVM assembly modules: part 0 holds the
/// kernels (`amdgpu_kernel`), the others every other definition, each in the
/// part its name hashes to. Local symbols become `hidden`, so the parts reach
/// each other when linked into one shared object. `None` for what this does
/// not handle (comdats, aliases, ifuncs, quoted or unnamed globals, named
/// types, module assembly), for fewer than 3 parts, and for a module without a kernel.
pub fn split(ir: &str, parts: usize) -> Option<Vec<String>> {
    if parts < 3 {
        return None;
    }
    let lines: Vec<&str> = ir.lines().collect();
    let inline_groups = inline_groups(&lines);
    let mut header: Vec<&str> = Vec::new();
    let mut named_metadata: Vec<&str> = Vec::new();
    let mut metadata: HashMap<u32, &str> = HashMap::new();
    let mut attributes: HashMap<u32, &str> = HashMap::new();
    let mut items: Vec<Item> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("define ") {
            let (body, local) = function_at(&lines, i)?;
            if line[line.find('@')?..].starts_with("@\"") {
                return None;
            }
            let inline = local && is_always_inline(line, &inline_groups);
            items.push(Item::Function { name: function_name(line), lines: body, local, kernel: line.contains(KERNEL_CC), inline });
            i += body.len();
            continue;
        }
        if let Some(rest) = line.strip_prefix("declare ") {
            let at = rest.find('@')?;
            if rest[at..].starts_with("@\"") {
                return None;
            }
            items.push(Item::Declaration { name: function_name(line), line });
        } else if line.starts_with('@') {
            if line.starts_with("@\"") || line[1..].starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            let rest = &line[line.find(" = ")? + 3..];
            if [" alias ", " ifunc "].iter().any(|k| rest.split(['[', '{', '<', '(']).next().unwrap_or("").contains(k)) {
                return None;
            }
            let linkage = rest.split_whitespace().next()?;
            items.push(Item::Global {
                name: global_name(line),
                line,
                local: matches!(linkage, "internal" | "private"),
                appending: linkage == "appending",
            });
        } else if let Some(rest) = line.strip_prefix("attributes #") {
            let (n, body) = rest.split_once(" = ")?;
            attributes.insert(n.parse().ok()?, body);
        } else if let Some(rest) = line.strip_prefix('!') {
            let (key, body) = rest.split_once(" = ")?;
            match key.parse::<u32>() {
                Ok(n) => {
                    metadata.insert(n, body);
                }
                Err(_) => named_metadata.push(line),
            }
        } else if line.starts_with("module asm ") {
            return None; // each part's `opt` would refuse it (gpu-ld links it in after)
        } else if line.starts_with("target ") || line.starts_with("source_filename ") {
            header.push(line);
        } else if line.starts_with('$') || line.starts_with('%') {
            return None; // comdats, named types
        } else if !(line.is_empty() || line.starts_with(';')) {
            return None; // something this reader does not know
        }
        i += 1;
    }
    if !items.iter().any(|it| matches!(it, Item::Function { kernel: true, .. })) {
        return None;
    }

    let renames = stable_names(&items);
    // Where each definition goes, and what every symbol looks like declared.
    let owner = |name: &str| 1 + (fnv1a(stable_name(&renames, name).as_bytes()) % (parts as u64 - 1)) as usize;
    // A local global's first user: the function of the smallest stable name
    // that names it.
    let mut first_user: HashMap<&str, &str> = HashMap::new();
    for item in &items {
        if let Item::Function { name, lines, kernel: false, inline: false, .. } = item {
            let me = stable_name(&renames, name);
            for line in &lines[1..] {
                for_each_ref(line, |r| {
                    if let Ref::Symbol(s) = r {
                        let user = first_user.entry(s).or_insert(me);
                        if me < *user {
                            *user = me;
                        }
                    }
                });
            }
        }
    }
    let mut declarations: HashMap<&str, String> = HashMap::new();
    let mut inline: HashMap<&str, &Item> = HashMap::new();
    let mut owned: Vec<Vec<&Item>> = (0..parts).map(|_| Vec::new()).collect();
    for item in &items {
        match item {
            Item::Function { name, inline: true, .. } => {
                inline.insert(name, item);
            }
            Item::Function { name, lines, local, kernel, .. } => {
                owned[if *kernel { 0 } else { owner(name) }].push(item);
                declarations.insert(name, function_declaration(lines[0], *local)?);
            }
            Item::Declaration { name, line } => {
                declarations.insert(name, line.to_string());
            }
            Item::Global { name, line, local, appending } => {
                let part = match (appending, local, first_user.get(name)) {
                    (true, _, _) => 1,
                    (false, true, Some(user)) => owner(user),
                    _ => owner(name),
                };
                owned[part].push(item);
                if !appending {
                    declarations.insert(name, global_declaration(line, *local)?);
                }
            }
        }
    }

    let tables = Tables {
        header: &header,
        named_metadata: &named_metadata,
        metadata: &metadata,
        attributes: &attributes,
        renames: &renames,
        inline: &inline,
    };
    let mut out = Vec::with_capacity(parts);
    for mine in &owned {
        out.push(write_part(mine, &declarations, &tables)?);
    }
    Some(out)
}

struct Tables<'a> {
    header: &'a [&'a str],
    named_metadata: &'a [&'a str],
    metadata: &'a HashMap<u32, &'a str>,
    attributes: &'a HashMap<u32, &'a str>,
    /// Local symbols' new names ([`stable_names`]).
    renames: &'a HashMap<&'a str, &'a str>,
    /// The `alwaysinline` functions, by name.
    inline: &'a HashMap<&'a str, &'a Item<'a>>,
}

/// The local symbols whose names end in `.llvm.<number>`, each to its name
/// without it, where no other symbol has or takes that name.
fn stable_names<'a>(items: &[Item<'a>]) -> HashMap<&'a str, &'a str> {
    let names: HashSet<&str> = items
        .iter()
        .map(|it| match it {
            Item::Function { name, .. } | Item::Declaration { name, .. } | Item::Global { name, .. } => *name,
        })
        .collect();
    let mut taken: HashSet<&str> = HashSet::new();
    let mut renames = HashMap::new();
    for item in items {
        let (name, local) = match item {
            Item::Function { name, local, .. } | Item::Global { name, local, .. } => (*name, *local),
            Item::Declaration { .. } => continue,
        };
        let Some((base, number)) = name.rsplit_once(".llvm.") else { continue };
        if local && !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) && !names.contains(base) && taken.insert(base) {
            renames.insert(name, base);
        }
    }
    renames
}

/// `name` as the parts write it ([`stable_names`]).
fn stable_name<'a>(renames: &HashMap<&'a str, &'a str>, name: &'a str) -> &'a str {
    renames.get(name).copied().unwrap_or(name)
}

/// One part: its definitions sorted by name, then the declarations of what
/// they name, then its attribute groups and metadata, renumbered.
fn write_part(mine: &[&Item], declarations: &HashMap<&str, String>, t: &Tables) -> Option<String> {
    let mut defined: Vec<(&str, Vec<String>)> = Vec::new();
    for item in mine {
        match item {
            Item::Function { name, lines, local, .. } => {
                let mut text = vec![made_hidden(lines[0], *local, "define ")];
                text.extend(lines[1..].iter().map(|l| without_srcloc(l)));
                defined.push((name, text));
            }
            Item::Global { name, line, local, .. } => defined.push((name, vec![made_hidden(line, *local, "= ")])),
            Item::Declaration { .. } => unreachable!("declarations are not owned"),
        }
    }
    // A copy of each `alwaysinline` function the part names, and of those
    // they name, local to the part.
    let mut copied: HashSet<&str> = HashSet::new();
    let mut k = 0;
    while k < defined.len() {
        let mut found: Vec<&str> = Vec::new();
        for line in &defined[k].1 {
            for_each_ref(line, |r| {
                if let Ref::Symbol(s) = r
                    && let Some((name, _)) = t.inline.get_key_value(s)
                    && copied.insert(name)
                {
                    found.push(name);
                }
            });
        }
        for name in found {
            if let Some(Item::Function { lines, .. }) = t.inline.get(name) {
                defined.push((name, lines.iter().map(|l| without_srcloc(l)).collect()));
            }
        }
        k += 1;
    }
    defined.sort_by_key(|(name, _)| stable_name(t.renames, name));
    let own: HashSet<&str> = defined.iter().map(|(n, _)| *n).collect();

    // Metadata the part reaches, in the order it reaches it.
    let mut md_order: Vec<u32> = Vec::new();
    let mut md_new: HashMap<u32, u32> = HashMap::new();
    let mut reach = |n: u32, order: &mut Vec<u32>| {
        if !md_new.contains_key(&n) {
            md_new.insert(n, order.len() as u32);
            order.push(n);
        }
    };
    // Named metadata first: every part has it, so it numbers the same in each.
    for line in t.named_metadata.iter().copied().chain(defined.iter().flat_map(|(_, l)| l).map(String::as_str)) {
        for_each_ref(line, |r| {
            if let Ref::Metadata(n) = r {
                reach(n, &mut md_order);
            }
        });
    }
    let mut k = 0;
    while k < md_order.len() {
        let body = t.metadata.get(&md_order[k])?;
        for_each_ref(body, |r| {
            if let Ref::Metadata(n) = r {
                reach(n, &mut md_order);
            }
        });
        k += 1;
    }

    // Symbols named by the definitions and the metadata, not defined here.
    let mut named: Vec<&str> = Vec::new();
    let md_bodies = md_order.iter().map(|n| t.metadata[n]);
    for line in defined.iter().flat_map(|(_, l)| l).map(String::as_str).chain(md_bodies) {
        for_each_ref(line, |r| {
            if let Ref::Symbol(s) = r
                && !own.contains(s)
            {
                named.push(s);
            }
        });
    }
    named.sort_unstable_by_key(|s| stable_name(t.renames, s));
    named.dedup();
    let mut decls: Vec<&str> = Vec::with_capacity(named.len());
    for s in named {
        decls.push(declarations.get(s)?);
    }

    // Attribute groups, in the order the part uses them.
    let mut attr_new: HashMap<u32, u32> = HashMap::new();
    let mut attr_order: Vec<u32> = Vec::new();
    for line in defined.iter().flat_map(|(_, l)| l).map(String::as_str).chain(decls.iter().copied()) {
        for_each_ref(line, |r| {
            if let Ref::Attributes(n) = r
                && !attr_new.contains_key(&n)
            {
                attr_new.insert(n, attr_order.len() as u32);
                attr_order.push(n);
            }
        });
    }

    let mut s = String::new();
    let mut put = |line: &str| {
        renumbered(&mut s, line, &md_new, &attr_new, t.renames);
        s.push('\n');
    };
    for l in t.header {
        put(l);
    }
    for l in defined.iter().flat_map(|(_, l)| l) {
        put(l);
    }
    for l in &decls {
        put(l);
    }
    for n in &attr_order {
        put(&format!("attributes #{n} = {}", t.attributes.get(n)?));
    }
    for l in t.named_metadata {
        put(l);
    }
    for n in &md_order {
        put(&format!("!{n} = {}", t.metadata[n]));
    }
    Some(s)
}

/// Appends `line` with its `!N` and `#N` renumbered and its symbols renamed.
fn renumbered(out: &mut String, line: &str, md: &HashMap<u32, u32>, attrs: &HashMap<u32, u32>, renames: &HashMap<&str, &str>) {
    let mut copied = 0;
    scan(line, |r, range| {
        let new = match r {
            Ref::Metadata(n) => md.get(&n).map(|n| format!("!{n}")),
            Ref::Attributes(n) => attrs.get(&n).map(|n| format!("#{n}")),
            Ref::Symbol(s) => renames.get(s).map(|s| format!("@{s}")),
        };
        if let Some(new) = new {
            out.push_str(&line[copied..range.start]);
            out.push_str(&new);
            copied = range.end;
        }
    });
    out.push_str(&line[copied..]);
}

/// `line` without its `, !srcloc !N` attachment.
fn without_srcloc(line: &str) -> String {
    const TAG: &str = ", !srcloc !";
    match line.find(TAG) {
        Some(at) => {
            let rest = &line[at + TAG.len()..];
            let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            format!("{}{}", &line[..at], &rest[digits..])
        }
        None => line.to_string(),
    }
}

/// FNV-1a: a hash that is the same in every build of `gpu-ld`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// `part` with an empty inline assembly statement at the entry of each
/// kernel that clobbers the highest register of each file in `regs`, so that
/// `llc` allocates the kernel at least that many.
pub fn with_register_floor(part: &str, regs: Registers) -> String {
    let mut clobbers: Vec<String> = Vec::new();
    if let Some(v) = regs.vgpr {
        clobbers.push(format!("~{{v{v}}}"));
    }
    if let Some(a) = regs.agpr {
        clobbers.push(format!("~{{a{a}}}"));
    }
    if let Some(s) = regs.sgpr {
        clobbers.push(format!("~{{s{s}}}"));
    }
    if clobbers.is_empty() {
        return part.to_string();
    }
    let statement = format!("  call void asm sideeffect \"\", \"{}\"()", clobbers.join(","));
    let mut out = String::with_capacity(part.len() + 256);
    let mut lines = part.lines().peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        if line.starts_with("define ") && line.contains(KERNEL_CC) {
            // After the entry block's label, if it has one.
            if let Some(next) = lines.peek()
                && crate::ir_text::is_label(next)
            {
                out.push_str(next);
                out.push('\n');
                lines.next();
            }
            out.push_str(&statement);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = r#"; ModuleID = 'x'
source_filename = "x"
target triple = "amdgcn-amd-amdhsa"

@llvm.compiler.used = appending addrspace(1) global [1 x ptr] [ptr addrspacecast (ptr addrspace(1) @flag to ptr)], section "llvm.metadata"
@alloc_1 = private unnamed_addr addrspace(1) constant [4 x i8] c"a@b!", align 1
@flag = local_unnamed_addr addrspace(1) global [8 x i8] zeroinitializer, align 8
@vtable = internal unnamed_addr addrspace(1) constant <{ ptr, [8 x i8] }> <{ ptr @small, [8 x i8] zeroinitializer }>, align 8

define internal fastcc void @big(ptr %0) unnamed_addr #0 {
start:
  call void @small(ptr addrspacecast (ptr addrspace(1) @alloc_1 to ptr)), !noalias !3
  call void @llvm.trap() #2
  ret void
}

define internal void @small(ptr %p) unnamed_addr #1 !dbg !5 {
  store ptr addrspacecast (ptr addrspace(1) @vtable to ptr), ptr %p, align 8, !alias.scope !4
  ret void
}

define amdgpu_kernel void @__gpu_start(ptr %lb) unnamed_addr #0 {
start:
  call fastcc void @big(ptr %lb)
  ret void
}

declare void @llvm.trap() #2

attributes #0 = { nounwind }
attributes #1 = { nounwind "x" }
attributes #2 = { cold noreturn nounwind }

!llvm.module.flags = !{!0}

!0 = !{i32 1, !"wchar_size", i32 4}
!1 = distinct !{!1, !"dom"}
!2 = distinct !{!2, !1, !"scope!9"}
!3 = !{!2}
!4 = !{!2}
!5 = !{!"unused"}
"#;

    fn part_with<'a>(parts: &'a [String], def: &str) -> &'a str {
        parts.iter().find(|p| p.contains(def)).unwrap_or_else(|| panic!("no part defines {def}"))
    }

    #[test]
    fn kernels_alone_in_part_0_each_definition_once() {
        let parts = split(IR, 4).expect("splits");
        assert_eq!(parts.len(), 4);
        assert!(parts[0].contains("define amdgpu_kernel void @__gpu_start("), "{}", parts[0]);
        assert!(parts[0].contains("declare hidden fastcc void @big(ptr %0) unnamed_addr #0"), "{}", parts[0]);
        assert!(!parts[0].contains("@small"), "part 0 names only what its kernel calls: {}", parts[0]);
        let all = parts.join("\n=====\n");
        for def in ["define hidden fastcc void @big(", "define hidden void @small(", "@flag = local_unnamed_addr", "@vtable = hidden"] {
            assert_eq!(all.matches(def).count(), 1, "{def}: {all}");
        }
        assert_eq!(all.matches("@llvm.compiler.used = appending").count(), 1);
        assert!(parts[1].contains("@llvm.compiler.used"), "appending globals go to part 1");
        for p in &parts {
            assert!(p.contains("target triple") && p.contains("!llvm.module.flags = !{!0}"), "{p}");
            assert!(p.contains("!0 = !{i32 1, !\"wchar_size\", i32 4}"), "{p}");
        }
    }

    #[test]
    fn metadata_and_attributes_renumbered_in_the_order_used() {
        let parts = split(IR, 4).unwrap();
        let big = part_with(&parts, "define hidden fastcc void @big(");
        // !0 (module flags) first, then the noalias list !3 → !1, its scope
        // !2 → !2, the domain !1 → !3.
        assert!(big.contains("!noalias !1\n"), "{big}");
        assert!(big.contains("!1 = !{!2}\n!2 = distinct !{!2, !3, !\"scope!9\"}\n!3 = distinct !{!3, !\"dom\"}"), "{big}");
        assert!(big.contains("call void @llvm.trap() #1\n"), "{big}");
        assert!(big.contains("declare void @llvm.trap() #1\n"), "{big}");
        assert!(big.contains("attributes #0 = { nounwind }\nattributes #1 = { cold noreturn nounwind }"), "{big}");
        let alloc = part_with(&parts, "@alloc_1 = hidden");
        assert!(alloc.contains("constant [4 x i8] c\"a@b!\", align 1"), "strings untouched: {alloc}");
        let small = part_with(&parts, "define hidden void @small(");
        assert!(small.contains("#0 !dbg !1 {"), "{small}");
        assert!(small.contains("!1 = !{!\"unused\"}"), "{small}");
    }

    #[test]
    fn a_part_does_not_change_when_other_parts_do() {
        let before = split(IR, 4).unwrap();
        // A new function and metadata elsewhere: the part holding @big keeps
        // its text unless the newcomer hashes to it.
        let edited = IR.replace(
            "declare void @llvm.trap() #2",
            "define internal void @zzz() unnamed_addr #1 {\n  ret void, !prof !6\n}\n\ndeclare void @llvm.trap() #2",
        ) + "!6 = !{!\"branch_weights\"}\n";
        let after = split(&edited, 4).unwrap();
        let zzz = after.iter().position(|p| p.contains("@zzz()")).unwrap();
        for (k, (b, a)) in before.iter().zip(&after).enumerate() {
            if k != zzz {
                assert_eq!(b, a, "part {k} changed");
            }
        }
    }

    #[test]
    fn local_names_lose_their_codegen_units_hash() {
        let ir = IR.replace("@small", "@small.llvm.123").replace("@flag", "@flag.llvm.9");
        let parts = split(&ir, 4).unwrap();
        let all = parts.join("\n");
        assert!(!all.contains("small.llvm"), "{all}");
        assert!(all.contains("define hidden void @small(") && all.contains("call void @small(ptr"), "{all}");
        assert!(all.contains("@flag.llvm.9 = local_unnamed_addr"), "external symbols keep their names: {all}");
        // Where the stripped name is taken, the symbol keeps its own.
        let clash = IR.replace("@small", "@small.llvm.123").replace("@big", "@small");
        assert!(split(&clash, 4).unwrap().join("\n").contains("@small.llvm.123("));
    }

    #[test]
    fn local_globals_go_with_their_first_user_and_srcloc_goes() {
        let parts = split(IR, 4).unwrap();
        // @alloc_1's only user is @big; @vtable's is @small.
        assert!(part_with(&parts, "define hidden fastcc void @big(").contains("@alloc_1 = hidden"));
        assert!(part_with(&parts, "define hidden void @small(").contains("@vtable = hidden"));
        let ir = IR.replace("call void @llvm.trap() #2", "call void asm sideeffect \"\", \"~{memory}\"() #2, !noalias !3, !srcloc !5");
        let big = split(&ir, 4).unwrap().into_iter().find(|p| p.contains("define hidden fastcc void @big(")).unwrap();
        assert!(big.contains("\"~{memory}\"() #1, !noalias !1\n"), "{big}");
    }

    #[test]
    fn always_inline_helpers_are_copied_where_named() {
        let ir = IR
            .replace("  call void @llvm.trap() #2\n", "  call void @helper()\n  call void @llvm.trap() #2\n")
            .replace("  ret void\n}\n\ndefine amdgpu_kernel", "  call void @helper()\n  ret void\n}\n\ndefine amdgpu_kernel")
            .replace("declare void @llvm.trap() #2", "define internal void @helper() #3 {\n  call void @inner()\n  ret void\n}\n\ndefine internal void @inner() alwaysinline {\n  ret void\n}\n\ndeclare void @llvm.trap() #2")
            .replace("attributes #2 = { cold noreturn nounwind }", "attributes #2 = { cold noreturn nounwind }\nattributes #3 = { alwaysinline nounwind }");
        let parts = split(&ir, 4).unwrap();
        let all = parts.join("\n");
        for def in ["define hidden fastcc void @big(", "define hidden void @small("] {
            let p = part_with(&parts, def);
            assert!(p.contains("define internal void @helper() #") && p.contains("define internal void @inner() alwaysinline {"), "{p}");
        }
        assert!(!all.contains("declare hidden void @helper"), "{all}");
        assert!(!parts[0].contains("@helper"), "the kernel names no helper: {}", parts[0]);
    }

    #[test]
    fn declines_what_it_does_not_handle() {
        assert!(split(IR, 2).is_none());
        assert!(split(&IR.replace("amdgpu_kernel ", ""), 4).is_none(), "no kernel");
        assert!(split(&IR.replace("source_filename", "$c = comdat any\nsource_filename"), 4).is_none());
        assert!(split(&format!("{IR}\n@a = internal alias i8, ptr @flag\n"), 4).is_none());
        assert!(split(&format!("{IR}\nmodule asm \".text\"\n"), 4).is_none());
    }

    #[test]
    fn register_floor_goes_after_the_kernels_entry_label() {
        let parts = split(IR, 4).unwrap();
        let floored = with_register_floor(&parts[0], Registers { vgpr: Some(75), agpr: Some(63), sgpr: Some(101) });
        assert!(
            floored.contains("{\nstart:\n  call void asm sideeffect \"\", \"~{v75},~{a63},~{s101}\"()\n  call fastcc void @big"),
            "{floored}"
        );
    }
}
