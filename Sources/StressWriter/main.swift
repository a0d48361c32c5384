import EventGraph
import Foundation

// A child process for crash tests: appends commits to a store until killed, printing
// "done N" after commit N has returned (so it is durable). Each commit inserts
// `perCommit` Item objects whose `batch` attribute is N and links them in order to a new
// Group, so a partial commit would be visible as a group with fewer items.
//
// Usage: StressWriter STORE [--per-commit K] [--count N] [--author NAME]
let args = Array(CommandLine.arguments.dropFirst())
guard let path = args.first else {
  FileHandle.standardError.write(Data("usage: StressWriter STORE [--per-commit K] [--count N]\n".utf8))
  exit(2)
}
func option(_ name: String) -> String? {
  guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
  return args[i + 1]
}
let perCommit = Int(option("--per-commit") ?? "") ?? 10
let count = Int(option("--count") ?? "") ?? Int.max
let author = option("--author") ?? "stress"

do {
  let store: EventStore
  if FileManager.default.fileExists(atPath: path + "/data.mdb") {
    store = try EventStore(path: path)
  } else {
    let model = try Model(name: "Stress", version: 1, entities: [
      EntityDescription(
        name: "Group", attributes: [AttributeDescription(name: "batch", type: .int64)],
        relationships: [
          RelationshipDescription(name: "items", destination: "Item", isToMany: true, isOrdered: true, inverse: "group", deleteRule: .cascade)
        ]),
      EntityDescription(
        name: "Item",
        attributes: [
          AttributeDescription(name: "batch", type: .int64), AttributeDescription(name: "payload", type: .string),
        ],
        relationships: [RelationshipDescription(name: "group", destination: "Group", inverse: "items")]),
    ])
    store = try EventStore.create(at: path, model: model)
  }
  var n = 0
  while n < count {
    n += 1
    let batch = n
    try store.write(metadata: CommitMetadata(author: author)) { tx in
      let g = try tx.insert("Group", ["batch": .int64(Int64(batch))])
      for i in 0..<perCommit {
        let item = try tx.insert("Item", ["batch": .int64(Int64(batch)), "payload": .string("\(author)-\(batch)-\(i)")])
        try tx.link(g, "items", item)
      }
    }
    // Unbuffered, so the parent sees each line as soon as the commit has returned.
    FileHandle.standardOutput.write(Data("done \(batch)\n".utf8))
  }
} catch {
  FileHandle.standardError.write(Data("StressWriter: \(error)\n".utf8))
  exit(1)
}
