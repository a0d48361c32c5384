import EventGraph

struct ImportCommand: ToolCommand {
  let spec = CommandSpec(
    name: "import", abstract: "Import objects from a JSON Lines file, in one commit or in batches.",
    discussion: """
      Each line is an object: {"id": ..., "entity": ..., "attributes": {...}, "relationships": {...}}.
      Ids are any strings unique in the file; references may point forward. The file is read a chunk at a \
      time. Each commit holds its objects with every relationship whose target has appeared; a reference to a \
      later line is linked in the commit that brings it. A bad line, a reference to no id of the file, or two \
      lines giving a to-one relationship different targets is refused, naming the lines; that commit writes \
      nothing. The store records the import's progress with each commit: run the same command again after an \
      interruption and it resumes where the last commit ended (it writes nothing when the whole file is in).
      """,
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("FILE", help: "The JSON Lines file, or '-' for standard input."),
    ],
    options: [
      OptionSpec(
        "batch", valueName: "N",
        help:
          "Commit every N objects instead of once (a batch grows while one of its objects waits for a later line to fill a required relationship). Without it the whole file is one commit, which the store holds in memory until it lands (7 to 8 times the file's size): give it for a large file."
      ),
      OptionSpec(
        "new-identities",
        help:
          "Import an export (ids such as Company/1) into a store that is not empty, as new objects with new identities."
      ),
    ],
    examples: [
      "eventtool import book.store people.jsonl", "eventtool import book.store - --batch 1000 < people.jsonl",
      "eventtool import other.store book.export.jsonl --new-identities",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let store = try openStore(try a.required("STORE"), writing: true)
    let batch = try a.int("batch")
    if let batch, batch < 1 { throw ToolError.usage("--batch needs a positive number, not \(batch)") }
    let file = try a.required("FILE")
    let input = try io.lines(file)
    let bar = io.progress("import", total: input.size)
    let result: ImportResult
    do {
      result = try store.importObjects(
        from: input, options: ImportOptions(batch: batch, newIdentities: a.flag("new-identities"))
      ) { bar.update($0) }
      bar.finish()
    } catch let e as FormatError {
      bar.finish()
      throw ToolError.failed("\(inputName(file)): \(ToolHints.message(e))")
    } catch {
      bar.finish()
      throw error
    }
    if let resumed = result.resumed {
      io.print(
        result.alreadyImported
          ? "already imported: \(resumed.objects) objects, through line \(resumed.line); nothing to do"
          : "resumed after line \(resumed.line) (\(resumed.objects) objects imported before)")
      if result.alreadyImported { return }
    }
    let seqs = result.commits.map { "\($0.firstSequence)...\($0.lastSequence)" }.joined(separator: ", ")
    io.print(
      "imported \(result.objects) objects in \(result.commits.count) commit(s)"
        + (seqs.isEmpty ? "" : " (sequences \(seqs))"))
  }
}
