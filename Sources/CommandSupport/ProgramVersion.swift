/// The release both executables report (`--version`) and the packages are named by
/// (scripts/build-deb.sh reads it from `analog-remote --version`).
package enum ProgramVersion {
    package static let text = "0.1.0"
}
