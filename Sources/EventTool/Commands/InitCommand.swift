import EventGraph

struct InitCommand: ToolCommand {
  let spec = CommandSpec(
    name: "init", abstract: "Create a new store with a model.",
    discussion: "The model is stored inside the store, so every other command works without the model file.",
    positionals: [PositionalSpec("STORE", help: "The directory to create (it must not exist or be empty).")],
    options: [OptionSpec("model", valueName: "FILE", help: "The model file (*.model.json).", isRequired: true)],
    examples: ["eventtool init book.store --model AddressBook.v1.model.json"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    let model = try Model(contentsOf: a.value("model") ?? "")
    let store = try EventStore.create(at: path, model: model, options: StoreOptions(keyFile: ToolKey.file))
    io.print(
      "created \(path): model \(model.name) v\(model.version), \(model.entities.count) entities, store \(store.storeID)"
    )
  }
}
