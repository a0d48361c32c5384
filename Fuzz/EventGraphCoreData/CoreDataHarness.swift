// Compiled into the EventGraphCoreData module by Tools/fuzz only. See
// Docs/reliability.md, "Fuzzing".
import EventGraph

public enum CoreDataFuzz {
  /// The model readers: XML `contents`, Xcode 3's `elements` and compiled `.mom` archives,
  /// told apart by their first bytes as `import-model` tells them; a model read is written
  /// as a model file with every key and with the keys this build loads, and the latter
  /// must load or be refused cleanly. Errors are clean refusals.
  public static func model(_ data: UnsafeRawBufferPointer) {
    guard let (_, model) = try? CoreDataModelBundle.read([UInt8](data), file: "fuzz") else { return }
    _ = try? model.modelFile(name: "Fuzz", version: 1, file: "fuzz", options: .full)
    if let out = try? model.modelFile(name: "Fuzz", version: 1, file: "fuzz", options: .loadable) {
      _ = try? Model(json: Array(out.text.utf8), file: "fuzz")
    }
  }

  /// The property list readers on their own: binary (`bplist00`, every object decoded and
  /// the top one resolved to a tree) and XML, and a keyed archive's reference check.
  public static func plist(_ data: UnsafeRawBufferPointer) {
    let bytes = [UInt8](data)
    _ = try? XMLPlist.read(bytes)
    _ = try? KeyedArchive(bytes, file: "fuzz")
  }
}
