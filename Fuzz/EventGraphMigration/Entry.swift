// Compiled into the EventGraphMigration module by Tools/fuzz only (the last module it
// builds, which sees every harness). See Docs/reliability.md, "Fuzzing".
import EventGraph
import EventGraphCoreData
import Foundation

/// The harness this binary runs, chosen by the name it is called by (Tools/fuzz links one
/// binary under each target's name).
private let harness: @Sendable (UnsafeRawBufferPointer) -> Void = {
  let name = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? ""
  switch name {
  case "commit": return Fuzz.commit
  case "record": return Fuzz.record
  case "predicate": return Fuzz.predicate
  case "model": return Fuzz.model
  case "mapping": return MappingFuzz.mapping
  case "jsonl": return Fuzz.jsonl
  case "cdmodel": return CoreDataFuzz.model
  case "plist": return CoreDataFuzz.plist
  default: fatalError("call this binary by a target's name (Tools/fuzz list), not '\(name)'")
  }
}()

/// With `EVENTGRAPH_FUZZ_SEEDS=DIRECTORY` set, writes the binary seeds there and exits
/// (`Tools/fuzz seeds`) instead of fuzzing.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutableRawPointer?, _ argv: UnsafeMutableRawPointer?) -> Int32 {
  guard let variable = getenv("EVENTGRAPH_FUZZ_SEEDS") else { return 0 }
  let directory = String(cString: variable)
  do {
    try Fuzz.writeSeeds(to: directory)
  } catch {
    fatalError("writing the seeds failed: \(error)")
  }
  exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  harness(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}
