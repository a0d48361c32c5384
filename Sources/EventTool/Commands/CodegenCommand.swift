import EventGraph
import Foundation

struct CodegenCommand: ToolCommand {
  let spec = CommandSpec(
    name: "codegen",
    abstract: "Write the Swift record types of a model, or of every model a store holds.",
    discussion: """
      One Codable struct per entity, conforming to EventGraph's Record: a property per attribute (an optional \
      for an optional attribute, the model's default as the property's for every type but uri), a Ref for a \
      to-one relationship and an array of them for a to-many, and an init(reading:) that a fetch reads it \
      through by position, with no Decoder. The output is the same for the same model, and already formatted \
      as swift format formats it. From a store, each model version's types are in an enum named after the \
      model and its version (AddressBookV2), for migration policies, and the active version's types also \
      have their entities' names at the top level (typealias AddressBook = AddressBookV2.AddressBook), so \
      that code against an entity a version bump leaves alone compiles across it; --namespace puts a model \
      file's types in an enum of that name. --access public makes the types, their properties and their \
      initializers public, for a module of record types that others import.
      """,
    positionals: [PositionalSpec("SOURCE", help: "A *.model.json file or a store directory.")],
    options: [
      OptionSpec("out", valueName: "FILE", help: "Write the source to FILE rather than to standard output."),
      OptionSpec("namespace", valueName: "NAME", help: "Put the types of a model file in an enum NAME."),
      OptionSpec("access", valueName: "LEVEL", help: "internal (the default) or public types."),
    ],
    examples: [
      "eventtool codegen AddressBook.v2.model.json --out Sources/App/AddressBook.swift",
      "eventtool codegen book.store --out Sources/App/BookModels.swift",
      "eventtool codegen book.store --access public --out Sources/BookRecords/Records.swift",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let source = try a.required("SOURCE")
    var isDirectory: ObjCBool = false
    let isStore = FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory) && isDirectory.boolValue
    let accessText = a.value("access") ?? "internal"
    guard let access = RecordAccess(rawValue: accessText) else {
      throw ToolError.usage("--access takes internal or public, not '\(accessText)'")
    }
    let text: String
    if isStore {
      guard a.value("namespace") == nil else {
        throw ToolError.usage("--namespace is for a model file: a store's models are named by their versions")
      }
      let store = try openStore(source)
      let models = try store.statistics().models.map { v in
        let m = try store.model(version: v.version)
        return (model: m, namespace: Optional("\(m.name)V\(m.version)"))
      }
      text = try Model.recordSource(models, access: access, currentVersion: store.model.version)
    } else {
      text = try Model(contentsOf: source).recordSource(namespace: a.value("namespace"), access: access)
    }
    guard let out = a.value("out") else { return io.writeOut(text) }
    do {
      try text.write(toFile: out, atomically: true, encoding: .utf8)
    } catch {
      throw ToolError.failed("\(out): cannot write the source (\(error.localizedDescription))")
    }
  }
}
