use super::*;

/// The runtime's three functions, as the optimized module has them.
const RUNTIME: &str = "\
define ptr @__gpu_unwind_exception() #0 {
  ret ptr null
}
define ptr @__gpu_unwind_word() #0 {
  ret ptr null
}
define ptr @__gpu_unwind_catch() #0 {
  ret ptr null
}
define void @__gpu_unwind_resume(ptr %e) #0 {
  ret void
}
";

/// A panic runtime that raises, a function with a cleanup pad, a caller
/// whose call may unwind (its block split, a phi after it), a call that
/// never returns, a catch, and a nounwind function that is left alone.
const PROGRAM: &str = "\
declare void @__gpu_unwind_raise(ptr) #1

define internal i32 @start_panic(ptr %p) #1 {
start:
  call void @__gpu_unwind_raise(ptr %p)
  ret i32 0
}

define internal void @panics() #2 {
  %1 = call i32 @start_panic(ptr null)
  unreachable
}

define internal { i64, ptr } @with_drop(ptr %0, i1 %c) #1 personality ptr @rust_eh_personality {
start:
  invoke void @panics() #2
          to label %ok unwind label %cleanup, !noalias !3
ok:
  ret { i64, ptr } zeroinitializer
cleanup:
  %2 = landingpad { ptr, i32 }
          cleanup
  call void @drop(ptr %0) #3
  resume { ptr, i32 } %2
}

define internal i64 @caller(ptr %x, i1 %c) #1 {
start:
  br i1 %c, label %a, label %b
a:
  %v = call { i64, ptr } @with_drop(ptr %x, i1 %c)
  %w = extractvalue { i64, ptr } %v, 0
  br label %b
b:
  %r = phi i64 [ %w, %a ], [ 0, %start ]
  call void @drop(ptr %x) #3
  ret i64 %r
}

define internal i1 @catches(ptr %x) #1 personality ptr @rust_eh_personality {
start:
  %r = invoke i64 @caller(ptr %x, i1 true)
          to label %done unwind label %catch
done:
  ret i1 false
catch:
  %lp = landingpad { ptr, i32 }
          catch ptr null
  %e = extractvalue { ptr, i32 } %lp, 0
  call void @drop(ptr %e) #3
  ret i1 true
}

define internal void @drop(ptr %x) #0 {
  ret void
}

define internal void @twice(ptr %x) #1 {
start:
  %a = call i64 @caller(ptr %x, i1 false)
  %b = call i64 @caller(ptr %x, i1 true)
  ret void
}

define internal void @rust_eh_personality() #0 {
  ret void
}

attributes #0 = { nounwind }
attributes #1 = { \"x\" }
attributes #2 = { cold noreturn }
attributes #3 = { nounwind }
attributes #4 = { noreturn }

!3 = !{}
";

fn lowered() -> (String, Report) {
    lower(&format!("{RUNTIME}{PROGRAM}"), true).expect("lowers").expect("unwinds")
}

#[test]
fn invokes_become_calls_that_branch_on_the_exception_word() {
    let (ir, report) = lowered();
    assert!(!ir.contains("invoke") && !ir.contains("landingpad") && !ir.contains("resume {"), "{ir}");
    assert!(ir.contains("  call void @panics() #2, !noalias !3\n"), "{ir}");
    assert!(ir.contains("  br i1 %uw.1.c, label %cleanup, label %ok, !prof !4\n"), "{ir}");
    assert!(ir.contains("!4 = !{!\"branch_weights\", i32 1, i32 1048576}"), "{ir}");
    assert_eq!(report.invokes, 2);
}

#[test]
fn landing_pads_take_the_exception_and_resume_gives_it_back() {
    let (ir, report) = lowered();
    assert!(ir.contains("  %uw.2 = call ptr @__gpu_unwind_catch()\n  %2 = insertvalue { ptr, i32 } { ptr poison, i32 0 }, ptr %uw.2, 0\n"), "{ir}");
    assert!(ir.contains("  %uw.3 = extractvalue { ptr, i32 } %2, 0\n  call void @__gpu_unwind_resume(ptr %uw.3)\n  br label %uw.ret\n"), "{ir}");
    assert!(ir.contains("uw.ret:\n  ret {i64,ptr} zeroinitializer\n}"), "{ir}");
    assert_eq!((report.landing_pads, report.resumes), (2, 1));
}

#[test]
fn calls_that_may_unwind_are_checked_and_their_block_split() {
    let (ir, _) = lowered();
    let caller = &ir[ir.find("@caller(").unwrap()..];
    let caller = &caller[..caller.find("\n}").unwrap()];
    assert!(caller.contains("  %v = call { i64, ptr } @with_drop(ptr %x, i1 %c)\n  %uw.1 = call ptr @__gpu_unwind_exception()\n  %uw.1.c = icmp ne ptr %uw.1, null\n  br i1 %uw.1.c, label %uw.ret, label %uw.c1, !prof !4\nuw.c1:\n  %w = extractvalue"), "{caller}");
    // The join's phi now comes from the split block's last part.
    assert!(caller.contains("%r = phi i64 [ %w, %uw.c1 ], [ 0, %start ]"), "{caller}");
    // A nounwind call is not checked.
    assert_eq!(caller.matches("@__gpu_unwind_exception").count(), 1, "{caller}");
    assert!(caller.contains("uw.ret:\n  ret i64 zeroinitializer"), "{caller}");
}

#[test]
fn a_call_that_never_returns_returns_when_unwinding_and_raise_is_resume() {
    let (ir, report) = lowered();
    assert!(ir.contains("  %1 = call i32 @start_panic(ptr null)\n  br label %uw.ret\nuw.ret:\n  ret void\n"), "{ir}");
    assert!(ir.contains("  call void @__gpu_unwind_resume(ptr %p)\n  %uw.1 = call ptr @__gpu_unwind_exception()"), "{ir}");
    assert!(!ir.contains("__gpu_unwind_raise"), "{ir}");
    // Functions and calls that may unwind no longer claim never to return.
    assert!(ir.contains("attributes #2 = { cold }"), "{ir}");
    assert!(ir.contains("attributes #4 = { \"gpu-ld-unwinds\" }"), "{ir}");
    assert!(!ir.contains(" personality ptr"), "{ir}");
    assert_eq!(report.unwinding_returns, 1);
    assert_eq!(report.checked_calls, 4);
}

#[test]
fn nounwind_functions_and_abort_programs_are_left_alone() {
    let (ir, _) = lowered();
    assert!(ir.contains("define internal void @drop(ptr %x) #0 {\n  ret void\n}"), "{ir}");
    let abort = "define void @f() #0 {\n  call void @g()\n  ret void\n}\ndeclare void @g()\nattributes #0 = { nounwind }\n";
    assert_eq!(lower(abort, true), Ok(None));
}

#[test]
fn a_program_that_unwinds_without_the_runtime_is_refused() {
    let err = lower(PROGRAM, true).unwrap_err();
    assert_eq!(err, Refused::NoRuntime(EXCEPTION));
    assert!(err.to_string().contains("panic = \"abort\""), "{err}");
}

#[test]
fn return_types_are_read_from_the_header() {
    assert_eq!(return_type("define internal fastcc noundef range(i64 0, 10) i64 @f(i64 %0) #0 {").as_deref(), Some("i64"));
    assert_eq!(return_type("define internal { ptr, { i64, i1 } } @f() {").as_deref(), Some("{ptr,{i64,i1}}"));
    assert_eq!(return_type("define <{ i8, i32 }> @f() {").as_deref(), Some("<{i8,i32}>"));
    assert_eq!(return_type("define void @f() {").as_deref(), Some("void"));
    assert_eq!(return_type("define noundef ptr addrspace(5) @f() {").as_deref(), Some("ptr addrspace(5)"));
    assert_eq!(entry_label("define void @f(ptr %0, i64 %x, i1 %1) {"), "2");
}

/// The lowered module is valid IR: `llvm-as` of the pinned toolchain's
/// llvm-tools accepts it (skipped, with the reason, where they are missing).
#[test]
fn the_lowered_module_assembles() {
    let Ok(bin) = crate::llvm_bin() else {
        eprintln!("skipped: no llvm-tools (rustup component llvm-tools) for llvm-as");
        return;
    };
    let (ir, _) = lowered();
    let dir = std::env::temp_dir().join(format!("gpu-ld-unwind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lowered.ll");
    std::fs::write(&file, &ir).unwrap();
    let out = std::process::Command::new(bin.join("opt")).args(["-passes=verify", "-disable-output"]).arg(&file).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}\n{ir}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_function_with_several_checks_finds_the_word_once() {
    let (ir, _) = lowered();
    let twice = &ir[ir.find("@twice(").unwrap()..];
    let twice = &twice[..twice.find("\n}").unwrap()];
    assert!(twice.contains("start:\n  %uw.w = call ptr @__gpu_unwind_word()\n  %a = call i64 @caller(ptr %x, i1 false)\n  %uw.1 = load ptr, ptr %uw.w, align 8\n"), "{twice}");
    assert!(twice.contains("  %uw.2 = load ptr, ptr %uw.w, align 8\n"), "{twice}");
    assert!(!twice.contains("@__gpu_unwind_exception"), "{twice}");
}

#[test]
fn without_word_once_every_check_asks_for_the_word() {
    let (ir, _) = lower(&format!("{RUNTIME}{PROGRAM}"), false).unwrap().unwrap();
    assert!(!ir.contains("@__gpu_unwind_word()\n") || !ir.contains("%uw.w ="), "{ir}");
    let twice = &ir[ir.find("@twice(").unwrap()..];
    assert_eq!(twice[..twice.find("\n}").unwrap()].matches("call ptr @__gpu_unwind_exception()").count(), 2);
}

#[test]
fn a_linked_in_raise_is_kept_and_its_asm_is_checked() {
    let raise = raise_ir();
    assert!(raise.contains("call void asm sideeffect unwind"), "{raise}");
    let ir = format!("{RUNTIME}{}\ndefine internal i32 @start(ptr %p) #1 {{\n  call void @__gpu_unwind_raise(ptr %p)\n  ret i32 0\n}}\nattributes #0 = {{ nounwind }}\nattributes #1 = {{ \"x\" }}\n", raise.replace("define void @__gpu_unwind_raise(ptr %e) {", "define void @__gpu_unwind_raise(ptr %e) #1 {"));
    let (out, report) = lower(&ir, true).unwrap().unwrap();
    assert!(out.contains("define void @__gpu_unwind_raise(ptr %e) #1 {"), "{out}");
    assert!(out.contains("  call void @__gpu_unwind_raise(ptr %p)\n  %uw.1 = call ptr @__gpu_unwind_exception()"), "{out}");
    assert!(out.contains("  call void asm sideeffect unwind \"\", \"\"()\n  %uw.1 = call ptr @__gpu_unwind_exception()"), "{out}");
    assert_eq!(report.checked_calls, 2);
}
