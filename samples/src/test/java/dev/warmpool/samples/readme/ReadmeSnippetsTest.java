package dev.warmpool.samples.readme;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every Java and Kotlin block in the READMEs compiles, because it is a region of a source file in
 * {@code samples} that the build compiles (or runs, for the recipes in the tests). A block is marked
 * on the line before its fence with {@code <!-- snippet: File#region -->}; the region is the code
 * between {@code // snippet:region} and {@code // end:region} in {@code File.java} or {@code File.kt}.
 * This test fails when a block has no marker, when a marker names no region, when a block and its
 * region differ (compared line by line, ignoring indentation, runs of spaces and blank lines), and
 * when a region is shown by no README.
 *
 * <p>A Gradle build script in Kotlin cannot be compiled here; it is marked
 * {@code <!-- not compiled: Gradle build script -->} instead, and only a block that declares
 * dependencies may carry that mark.
 */
class ReadmeSnippetsTest {
  /** The documents whose code blocks are checked, relative to the repository root. */
  static final List<String> DOCUMENTS = List.of("README.md", "docs/architecture.md",
      "pool-core/README.md", "pool-reactor/README.md", "pool-rxjava/README.md",
      "pool-kotlin/README.md", "pool-micrometer/README.md", "pool-spring-boot/README.md");

  private static final Path ROOT = Path.of("..");
  private static final List<Path> SOURCE_ROOTS = List.of(Path.of("src/main/java"),
      Path.of("src/main/kotlin"), Path.of("src/test/java"), Path.of("src/test/kotlin"));

  private static final Pattern FENCE = Pattern.compile("^\\s*```\\s*([\\w.+-]*)\\s*$");
  private static final Pattern MARKER =
      Pattern.compile("^\\s*<!--\\s*snippet:\\s*([\\w$]+)#([\\w-]+)\\s*-->\\s*$");
  private static final Pattern NOT_COMPILED =
      Pattern.compile("^\\s*<!--\\s*not compiled: Gradle build script\\s*-->\\s*$");
  private static final Pattern REGION_START = Pattern.compile("^\\s*// snippet:([\\w-]+)\\s*$");
  private static final Set<String> CODE = Set.of("java", "kotlin", "kt", "kts");

  @Test
  void everyJavaAndKotlinBlockOfTheReadmesIsARegionOfACompiledSource() throws IOException {
    Map<String, String> sources = sources();
    List<String> problems = new ArrayList<>();
    Set<String> shown = new LinkedHashSet<>();
    for (String document : DOCUMENTS) {
      problems.addAll(check(document, Files.readString(ROOT.resolve(document)),
          file -> sources.get(file), shown));
    }
    for (Map.Entry<String, String> source : sources.entrySet()) {
      Matcher start = REGION_START.matcher("");
      for (String line : source.getValue().split("\n", -1)) {
        if (start.reset(line).matches() && !shown.contains(source.getKey() + "#" + start.group(1))) {
          problems.add(source.getKey() + "#" + start.group(1) + ": a region no README shows");
        }
      }
    }
    assertThat(problems).as("README snippets").isEmpty();
    assertThat(shown).as("blocks checked").hasSizeGreaterThan(10);
  }

  @Test
  void anUnmarkedBlockFails() {
    String readme = "text\n\n```java\nint x = 1;\n```\n";
    assertThat(check("R.md", readme, file -> null, new LinkedHashSet<>()))
        .singleElement().asString().contains("R.md:3", "no <!-- snippet: File#region --> marker");
  }

  @Test
  void aBlockThatDriftedFromItsRegionFails() {
    String source = "class A {\n  void a() {\n    // snippet:one\n    int x =   1;\n\n    // end:one\n  }\n}\n";
    Function<String, String> lookup = file -> file.equals("A") ? source : null;
    String same = "<!-- snippet: A#one -->\n```java\nint x = 1;\n```\n";
    String drifted = "<!-- snippet: A#one -->\n```java\nint x = 2;\n```\n";
    assertThat(check("R.md", same, lookup, new LinkedHashSet<>())).isEmpty();
    assertThat(check("R.md", drifted, lookup, new LinkedHashSet<>()))
        .singleElement().asString().contains("R.md:2", "differs from A#one");
    assertThat(check("R.md", "<!-- snippet: A#two -->\n```java\nx\n```\n", lookup, new LinkedHashSet<>()))
        .singleElement().asString().contains("no region two in A");
  }

  @Test
  void onlyADependencyBlockMayGoUncompiled() {
    String gradle = "<!-- not compiled: Gradle build script -->\n```kotlin\ndependencies {\n"
        + "    implementation(\"dev.warmpool:warmpool-core\")\n}\n```\n";
    String code = "<!-- not compiled: Gradle build script -->\n```kotlin\nval x = 1\n```\n";
    assertThat(check("R.md", gradle, file -> null, new LinkedHashSet<>())).isEmpty();
    assertThat(check("R.md", code, file -> null, new LinkedHashSet<>())).singleElement().asString()
        .contains("not a Gradle dependencies block");
  }

  /**
   * The problems of one document: its Java and Kotlin blocks against the regions {@code lookup}
   * finds by file name (without extension). Adds each {@code File#region} it checks to {@code shown}.
   */
  static List<String> check(String document, String text, Function<String, String> lookup,
      Set<String> shown) {
    List<String> problems = new ArrayList<>();
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      Matcher open = FENCE.matcher(lines[i]);
      if (!open.matches() || open.group(1).isEmpty()) {
        continue;
      }
      int end = i + 1;
      while (end < lines.length && !FENCE.matcher(lines[end]).matches()) {
        end++;
      }
      String block = String.join("\n", List.of(lines).subList(i + 1, Math.min(end, lines.length)));
      String where = document + ":" + (i + 1);
      String before = i > 0 ? lines[i - 1] : "";
      int fence = i;
      i = end; // the closing fence is not an opening one
      if (!CODE.contains(open.group(1))) {
        continue;
      }
      if (NOT_COMPILED.matcher(before).matches()) {
        if (!block.strip().startsWith("dependencies {") || !block.contains("implementation(")) {
          problems.add(where + ": marked not compiled, but not a Gradle dependencies block");
        }
        continue;
      }
      Matcher marker = MARKER.matcher(before);
      if (!marker.matches()) {
        problems.add(where + ": a " + open.group(1)
            + " block with no <!-- snippet: File#region --> marker on line " + fence);
        continue;
      }
      String file = marker.group(1);
      String name = marker.group(2);
      String source = lookup.apply(file);
      if (source == null) {
        problems.add(where + ": no source file " + file + ".java or " + file + ".kt in samples");
        continue;
      }
      String region = region(source, name);
      if (region == null) {
        problems.add(where + ": no region " + name + " in " + file);
        continue;
      }
      shown.add(file + "#" + name);
      if (!normalise(region).equals(normalise(block))) {
        problems.add(where + ": the block differs from " + file + "#" + name + "\n--- README:\n"
            + normalise(block) + "\n--- source:\n" + normalise(region));
      }
    }
    return problems;
  }

  /** The lines between {@code // snippet:name} and {@code // end:name}, or null. */
  static String region(String source, String name) {
    List<String> lines = List.of(source.split("\n", -1));
    int start = -1;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.equals("// snippet:" + name)) {
        start = i + 1;
      } else if (line.equals("// end:" + name) && start >= 0) {
        return String.join("\n", lines.subList(start, i));
      }
    }
    return null;
  }

  /** Each line stripped, runs of blanks made one space, blank lines left out. */
  static String normalise(String code) {
    StringBuilder out = new StringBuilder();
    for (String line : code.split("\n")) {
      String s = line.strip().replaceAll("\\s+", " ");
      if (!s.isEmpty()) {
        out.append(s).append('\n');
      }
    }
    return out.toString();
  }

  /** The Java and Kotlin sources of this module that hold regions, by file name without extension. */
  private static Map<String, String> sources() throws IOException {
    Map<String, String> byName = new TreeMap<>();
    for (Path root : SOURCE_ROOTS) {
      if (!Files.isDirectory(root)) {
        continue;
      }
      try (Stream<Path> files = Files.walk(root)) {
        files.filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".kt"))
            .forEach(p -> {
              String file = p.getFileName().toString();
              String name = file.substring(0, file.lastIndexOf('.'));
              try {
                String text = Files.readString(p);
                if (!text.contains("// snippet:")) {
                  return; // holds no region
                }
                String previous = byName.put(name, text);
                assertThat(previous).as("two sources with regions named %s in samples", name).isNull();
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });
      }
    }
    return byName;
  }
}
