import EventGraph
import Foundation

/// One model file written by ``CoreDataModelImport``.
public struct ImportedModelFile: Sendable, Equatable {
  /// `DIR/NAME.vN.model.json`.
  public var path: String
  public var version: Int
  /// The Core Data version's name (`Model 2`) and the file it was read from.
  public var versionName: String
  public var source: String
  public var format: String
  public var isCurrent: Bool
  public var entityCount: Int
  public var notes: [String]
}

/// `eventtool import-model`: every version of a Core Data model as an EventGraph model file.
public enum CoreDataModelImport {
  /// Reads every version, converts each, checks that each loads as an EventGraph model,
  /// then writes them all (nothing is written when one fails).
  ///
  /// - Parameters:
  ///   - options: the keys to write; ``ModelWriterOptions/loadable`` by default, so that
  ///     every file written loads in this build.
  ///   - strict: refuse the model, writing nothing, when any version converts or leaves out
  ///     anything (a note).
  public static func run(
    _ path: String, into directory: String, options: ModelWriterOptions = .loadable, strict: Bool = false
  ) throws -> [ImportedModelFile] {
    let (name, versions) = try CoreDataModelBundle.read(path)
    var outputs: [(ImportedModelFile, String)] = []
    for v in versions {
      let out = try v.model.modelFile(name: name, version: v.version, file: v.file, options: options)
      guard out.entityCount > 0 else { throw CoreDataError(file: v.file, "the model has no entity") }
      let target = directory + "/\(name).v\(v.version).model.json"
      do {
        _ = try Model(json: Array(out.text.utf8), file: target)
      } catch {
        throw CoreDataError(file: v.file, "the EventGraph model made from it does not load: \(error)")
      }
      outputs.append(
        (
          ImportedModelFile(
            path: target, version: v.version, versionName: v.name, source: v.file, format: v.format,
            isCurrent: v.isCurrent,
            entityCount: out.entityCount, notes: out.notes), out.text
        ))
    }
    if strict, let noted = outputs.first(where: { !$0.0.notes.isEmpty })?.0 {
      throw CoreDataError.strict(file: noted.source, notes: noted.notes, first: noted.notes[0])
    }
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for (file, text) in outputs {
      try Data(text.utf8).write(to: URL(fileURLWithPath: file.path), options: .atomic)
    }
    return outputs.map(\.0)
  }
}
