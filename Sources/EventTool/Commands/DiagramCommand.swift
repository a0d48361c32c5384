import EventGraph
import EventGraphMigration
import Foundation

struct DiagramCommand: ToolCommand {
  let spec = CommandSpec(
    name: "diagram",
    abstract: "Write a Graphviz DOT diagram of a model, or of two versions and the mapping between them.",
    discussion: """
      Entities with their attributes; relationships with their inverses, to-many arity and delete rules. With \
      --mapping, both versions side by side and an edge per entity mapping (inferred ones dashed). The other \
      version's model is read from the store (which keeps every version it has seen) or from --model.
      """,
    positionals: [PositionalSpec("SOURCE", help: "A store directory or a *.model.json file.")],
    options: [
      OptionSpec("mapping", valueName: "FILE", help: "A *.mapping.json file: draw both versions and the mapping."),
      OptionSpec("model", valueName: "FILE", help: "The other version's model, when the store does not have it."),
    ],
    examples: [
      "eventtool diagram AddressBook.v2.model.json | dot -Tsvg > model.svg",
      "eventtool diagram book.store --mapping AddressBook.v1-v2.mapping.json --model AddressBook.v2.model.json",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let source = try a.required("SOURCE")
    let other = try a.value("model").map { try Model(contentsOf: $0) }
    var isDirectory: ObjCBool = false
    let isStore = FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory) && isDirectory.boolValue
    let store = isStore ? try openStore(source) : nil
    let base = try store?.model ?? Model(contentsOf: source)
    guard let file = a.value("mapping") else {
      io.writeOut(base.dot())
      return
    }
    let mapping = try MappingModel(contentsOf: file)
    func model(_ version: Int) throws -> Model {
      if base.version == version { return base }
      if let other, other.version == version { return other }
      if let store, try store.versions().contains(version) { return try store.model(version: version) }
      throw ToolError.failed("no model of version \(version): give it with --model")
    }
    let compiled = try CompiledMapping(
      mapping, from: try model(mapping.source), to: try model(mapping.destination), policies: .permissive, file: file)
    io.writeOut(compiled.dot())
  }
}
