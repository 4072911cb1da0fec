# Sourced: `crate_source NAME VERSION DIR` prints the folder of crates.io's
# NAME-VERSION as cargo downloads it (a throwaway package in DIR that depends
# on it exactly, `cargo fetch`, its path from `cargo metadata`), so a clean
# machine gets the same source.
crate_source() {
    local name=$1 version=$2 dir=$3
    mkdir -p "$dir/src"
    printf '[package]\nname = "crate-source"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n%s = "=%s"\n' \
        "$name" "$version" > "$dir/Cargo.toml"
    : > "$dir/src/lib.rs"
    cargo fetch --quiet --manifest-path "$dir/Cargo.toml"
    cargo metadata --quiet --format-version 1 --manifest-path "$dir/Cargo.toml" |
        python3 -c 'import json,os,sys; m=json.load(sys.stdin); print(os.path.dirname(next(p["manifest_path"] for p in m["packages"] if p["name"]==sys.argv[1] and p["version"]==sys.argv[2])))' "$name" "$version"
}
