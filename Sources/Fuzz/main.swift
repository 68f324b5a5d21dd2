// `analog-remote-fuzz NAME [libFuzzer options…] [CORPUS…]`: runs one harness of FuzzHarnesses
// under libFuzzer. Only scripts/fuzz.sh builds it with the instrumentation and libFuzzer linked;
// the ordinary build says so and exits 3.
import CLibFuzzer
import FuzzHarnesses
import Glibc

func fail(_ message: String, status: Int32) -> Never {
    let line = Array("analog-remote-fuzz: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

/// The harness libFuzzer calls back; a C callback cannot capture, so it reads this global.
let selected: Harness = {
    let names = Harness.allCases.map(\.rawValue).joined(separator: " ")
    guard CommandLine.arguments.count >= 2, let chosen = Harness(rawValue: CommandLine.arguments[1]) else {
        fail("usage: analog-remote-fuzz NAME [libFuzzer options] [CORPUS…]; names: \(names)", status: 64)
    }
    return chosen
}()
guard CLibFuzzer_available() != 0 else {
    fail("this build has no libFuzzer — build and run it with scripts/fuzz.sh", status: 3)
}

// libFuzzer sees argv without the harness name.
var arguments = [CommandLine.arguments[0]] + CommandLine.arguments.dropFirst(2)
var cStrings: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
var argc = Int32(arguments.count)
let status = cStrings.withUnsafeMutableBufferPointer { buffer -> Int32 in
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = buffer.baseAddress
    return CLibFuzzer_run(&argc, &argv) { data, size in
        selected.run(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
        return 0
    }
}
exit(status)
