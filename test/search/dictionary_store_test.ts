/**
 * Specifications of the dictionaries kept on disk (`dictionary_store.ts`):
 * looked up in their SQLite file, they translate every English word exactly
 * as the dictionaries read into memory do (the file loses nothing), and the
 * file is made again when a dictionary is added or changed, not otherwise.
 */
import assert from "node:assert/strict";
import { loadDictionaries } from "../../src/search/dictionaries.ts";
import { openDictionaryStore } from "../../src/search/dictionary_store.ts";
import { tempDir } from "../helpers/temp.ts";

/** What each pair's translations are written in, to see that a word's translations reach every pair. */
const SCRIPTS: Record<string, RegExp> = {
  "en→de": /^[a-zäöüß]+$/u,
  "en→ja": /[\p{Script=Hiragana}\p{Script=Katakana}]|^\p{Script=Han}+$/u,
  "en→zh": /^\p{Script=Han}+$/u,
  "en→ru": /^\p{Script=Cyrillic}+$/u,
  "en→ar": /^\p{Script=Arabic}+$/u,
};

Deno.test({
  name: "looked up in their file, the dictionaries translate every English word as when read into memory",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir();
    const store = await openDictionaryStore({ path: `${dir.path}/dictionaries.sqlite` });
    const memory = await loadDictionaries();
    try {
      assert.deepEqual(store.pairs(), memory.pairs(), "the same pairs are on");
      let words = 0;
      for (const [stem] of memory.translations()) {
        assert.deepEqual(store.translate(stem), memory.translate(stem), `"${stem}" translates the same`);
        assert.deepEqual(
          store.foreignTranslations(stem),
          memory.foreignTranslations(stem),
          `"${stem}" adds the same translations to a search`,
        );
        words++;
      }
      assert.ok(words > 70_000, `every English word of the dictionaries is compared: ${words}`);
      // Words a question asks, each with translations into the pairs named.
      for (const word of ["house", "mother", "water", "price", "court"]) {
        const translations = store.translate(word);
        for (const [pair, script] of Object.entries(SCRIPTS)) {
          assert.ok(
            translations.some((t) => script.test(t)),
            `"${word}" has an ${pair} translation: ${translations}`,
          );
        }
      }
      assert.deepEqual(store.translate("qzxjv"), [], "a word no dictionary knows has no translation");
    } finally {
      store.close();
    }
  },
});

Deno.test({
  name: "the kept dictionaries are made again when a dictionary is added or changed, and not when none is",
  sanitizeResources: false,
  fn: async () => {
    await using dictd = await tempDir();
    await using apertium = await tempDir();
    await using data = await tempDir();
    const copy = async (name: string) => {
      for (const suffix of [".index", ".dict.dz"]) {
        await Deno.copyFile(`/usr/share/dictd/${name}${suffix}`, `${dictd.path}/${name}${suffix}`);
      }
    };
    const path = `${data.path}/dictionaries.sqlite`;
    const open = async () => {
      const store = await openDictionaryStore({
        dir: dictd.path,
        apertiumDir: apertium.path,
        chinese: false,
        path,
      });
      const pairs = store.pairs().map((pair) => pair.pair);
      store.close();
      return { pairs, inode: (await Deno.stat(path)).ino };
    };
    // Not a dictionary file at all: it is replaced.
    await Deno.writeTextFile(path, "not a database");
    await copy("freedict-eng-fra");
    const first = await open();
    assert.deepEqual(first.pairs, ["en→fr"]);
    assert.equal((await open()).inode, first.inode, "opened as kept when nothing changed");

    await copy("freedict-eng-spa");
    const added = await open();
    assert.deepEqual(added.pairs, ["en→fr", "en→es"], "an added dictionary is read");
    assert.notEqual(added.inode, first.inode);

    // A new package version: the same file, another time.
    await Deno.utime(`${dictd.path}/freedict-eng-spa.dict.dz`, new Date(), new Date(Date.now() - 86_400_000));
    assert.notEqual((await open()).inode, added.inode, "a changed dictionary is read again");

    await Deno.remove(`${dictd.path}/freedict-eng-fra.index`);
    assert.deepEqual((await open()).pairs, ["en→es"], "a removed dictionary's pair is off");

    // Apertium's English–Spanish dictionary installed, then removed: read anew each time.
    const bilingual = "/usr/share/apertium/apertium-eng-spa/eng-spa.autobil.bin";
    if (await Deno.stat(bilingual).then(() => true, () => false)) {
      const before = await open();
      await Deno.mkdir(`${apertium.path}/apertium-eng-spa`);
      await Deno.copyFile(bilingual, `${apertium.path}/apertium-eng-spa/eng-spa.autobil.bin`);
      const installed = await open();
      assert.notEqual(installed.inode, before.inode, "an installed Apertium package is read");
      const store = await openDictionaryStore({
        dir: dictd.path,
        apertiumDir: apertium.path,
        chinese: false,
        path,
      });
      assert.match(store.pairs()[0]!.source, /apertium-eng-spa\/eng-spa\.autobil\.bin$/);
      store.close();
      await Deno.remove(`${apertium.path}/apertium-eng-spa`, { recursive: true });
      assert.notEqual((await open()).inode, installed.inode, "a removed Apertium package is read again");
    } else console.warn(`skipped the Apertium part: ${bilingual} is missing (apertium-eng-spa; see .ci/run)`);
  },
});
