import EventGraph

struct ImportCommand: ToolCommand {
  let spec = CommandSpec(
    name: "import", abstract: "Import objects from a JSON Lines file, in one commit.",
    discussion: """
      Each line is an object: {"id": ..., "entity": ..., "attributes": {...}, "relationships": {...}}.
      Ids are any strings unique in the file; references may point forward. The whole file is checked \
      before anything is written: a bad line writes nothing and names the line and field.
      """,
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("FILE", help: "The JSON Lines file, or '-' for standard input."),
    ],
    options: [OptionSpec("batch", valueName: "N", help: "Commit every N objects instead of once.")],
    examples: ["eventtool import book.store people.jsonl", "eventtool import book.store - --batch 1000 < people.jsonl"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let store = try openStore(try a.required("STORE"), writing: true)
    let batch = try a.int("batch")
    if let batch, batch < 1 { throw ToolError.usage("--batch needs a positive number, not \(batch)") }
    let file = try a.required("FILE")
    let bytes = try io.read(file)
    let result: ImportResult
    do {
      result = try store.importObjects(bytes, batch: batch)
    } catch let e as FormatError {
      throw ToolError.failed("\(file == "-" ? "standard input" : file): \(e)")
    }
    let seqs = result.commits.map { "\($0.firstSequence)...\($0.lastSequence)" }.joined(separator: ", ")
    io.print(
      "imported \(result.objects) objects in \(result.commits.count) commit(s)"
        + (seqs.isEmpty ? "" : " (sequences \(seqs))"))
  }
}
