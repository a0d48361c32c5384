import EventGraph
import Foundation

struct CodegenCommand: ToolCommand {
  let spec = CommandSpec(
    name: "codegen",
    abstract: "Write the Swift record types of a model, or of every model a store holds.",
    discussion: """
      One Codable struct per entity, conforming to EventGraph's Record: a property per attribute (an optional \
      for an optional attribute), a Ref for a to-one relationship and an array of them for a to-many, and an \
      init(reading:) that a fetch reads it through by position, with no Decoder. The output is the same for \
      the same model, and already formatted as swift format formats it. From a store, each model version's \
      types are in an enum named after the model and its version (AddressBookV2); --namespace puts a \
      model file's types in an enum of that name.
      """,
    positionals: [PositionalSpec("SOURCE", help: "A *.model.json file or a store directory.")],
    options: [
      OptionSpec("out", valueName: "FILE", help: "Write the source to FILE rather than to standard output."),
      OptionSpec("namespace", valueName: "NAME", help: "Put the types of a model file in an enum NAME."),
    ],
    examples: [
      "eventtool codegen AddressBook.v2.model.json --out Sources/App/AddressBook.swift",
      "eventtool codegen book.store --out Sources/App/BookModels.swift",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let source = try a.required("SOURCE")
    var isDirectory: ObjCBool = false
    let isStore = FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory) && isDirectory.boolValue
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
      text = try Model.recordSource(models)
    } else {
      text = try Model(contentsOf: source).recordSource(namespace: a.value("namespace"))
    }
    guard let out = a.value("out") else { return io.writeOut(text) }
    do {
      try text.write(toFile: out, atomically: true, encoding: .utf8)
    } catch {
      throw ToolError.failed("\(out): cannot write the source (\(error.localizedDescription))")
    }
  }
}
