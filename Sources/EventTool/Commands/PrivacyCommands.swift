import EventGraph
internal import EventGraphText

/// `eventtool keygen`: a new key-encryption key (Docs/privacy.md).
struct KeygenCommand: ToolCommand {
  let spec = CommandSpec(
    name: "keygen",
    abstract: "Write a new random key: a key-encryption key for personal data, or a replication stream's writers' key.",
    discussion:
      "Writes 32 random bytes to PATH with mode 0600, and never overwrites a file. Give the file to every command on a store whose model has personal attributes with --key-file PATH (or EVENTGRAPH_KEY_FILE), and keep it apart from the store and its backups: whoever holds both can read the personal data of every subject not erased. The same kind of file is a replication stream's writers' key (--stream-key PATH of replicate, replica and promote): make one of its own for that.",
    positionals: [PositionalSpec("PATH", help: "The key file to create.")],
    examples: ["eventtool keygen book.key", "eventtool keygen book.stream-key"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("PATH")
    try EventStore.generateKeyFile(at: path)
    io.print("wrote \(path): a new random key (32 bytes, mode 0600)")
  }
}

/// `eventtool erase`: a subject's personal data made unreadable everywhere.
struct EraseCommand: ToolCommand {
  let spec = CommandSpec(
    name: "erase", abstract: "Erase a subject's personal data by destroying its key.",
    discussion:
      "Commits an erasure event (the subject, the time, the reason; none of the data) and, in the same commit, destroys the subject's data key, overwriting it in place in the store's subject-key file. Every personal value of the subject, and of the objects whose subject it is, in every commit, version, copy and replica of the log, is unreadable from then on; everything else stays. Needs no key-encryption key. Erasing a subject twice changes nothing and says so; an object that is not a subject (a PhoneBook whose subject is its addressBook) is refused, naming the subject to erase.",
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("OBJECT", help: "The subject, as Entity/N (a deleted one too)."),
    ],
    options: [
      OptionSpec("reason", valueName: "TEXT", help: "Why, kept in the erasure event (no personal data here)."),
      OptionSpec("json", help: "Print the result as JSON."),
    ],
    examples: ["eventtool erase book.store AddressBook/1 --reason 'request 2026-118'"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    let text = try a.required("OBJECT")
    let store = try openStore(path, writing: true)
    guard let (name, id) = ObjectID.parse(text) else {
      throw ToolError.usage("OBJECT is written Entity/N, not '\(text)'")
    }
    let named = try store.model.requireEntity(name)
    let result = try store.write { tx -> Bool in
      guard let e = try tx.entityID(of: id), store.model.isKind(e, of: named.id) else {
        throw ToolError.failed("no object \(text)")
      }
      return try tx.erase(id, reason: a.value("reason"))
    }
    if a.flag("json") {
      var fields = [JSONField("store", .string(path)), JSONField("object", .string(text))]
      fields.append(JSONField("erased", .bool(result.value == true)))
      if let c = result.commit { fields.append(JSONField("commit", .int(Int64(c.number)))) }
      io.print(JSON.object(fields).serialized())
      return
    }
    if let c = result.commit, result.value == true {
      io.print("erased \(text): commit \(c.number), its key destroyed")
    } else {
      io.print("\(text) was erased before: nothing to do")
    }
  }
}

/// `eventtool rekey`: the key-encryption key rotated without rewriting the log.
struct RekeyCommand: ToolCommand {
  let spec = CommandSpec(
    name: "rekey", abstract: "Rotate a store's key-encryption key without rewriting its log.",
    discussion:
      "Wraps every subject's data key, the blind-hash key and the key check again under the key in --new-key-file (make it with eventtool keygen), opening them with the current key given by --key-file (or EVENTGRAPH_KEY_FILE). The log, the sealed values and the blind hashes stay as they are. The new subject-key file is written and flushed beside the old one, one commit makes the new key the store's, and the old file is overwritten with zeros before the new one replaces it: a run killed anywhere leaves the store under the old key unchanged, or under the new one, finished when it is next opened. No other process may have the store open. Backups and snapshots made before keep the old key.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [
      OptionSpec("new-key-file", valueName: "PATH", help: "The new key-encryption key's file."),
      OptionSpec("json", help: "Print the result as JSON."),
    ],
    examples: ["eventtool rekey book.store --key-file old.key --new-key-file new.key"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    guard let newKey = a.value("new-key-file") else {
      throw ToolError.usage("give the new key with --new-key-file PATH (eventtool keygen makes one)")
    }
    guard let current = ToolKey.file else {
      throw ToolError.usage("give the current key with --key-file PATH (or EVENTGRAPH_KEY_FILE)")
    }
    let report = try reportingAccess(path, writing: true) {
      try EventStore.rekey(at: path, options: StoreOptions(keyFile: current), newKeyFile: newKey)
    }
    if a.flag("json") {
      io.print(
        JSON.object([
          JSONField("store", .string(path)), JSONField("keyFile", .string(newKey)),
          JSONField("subjects", .int(Int64(report.subjects))), JSONField("erased", .int(Int64(report.erased))),
          JSONField("seconds", .double(report.seconds)),
        ]).serialized())
      return
    }
    io.print(
      "rekeyed \(path): \(report.subjects) subject keys wrapped under \(newKey) (\(report.erased) erased left empty); open it with --key-file \(newKey) from now on"
    )
  }
}
