"""Charts: a figure as PNG and SVG; a review's charts drawn only when read."""

from analysis.charts import Chart, LazyCharts, figure_chart, new_figure


def test_figure_chart_gives_png_and_svg():
    figure = new_figure(2, 1)
    figure.add_subplot(1, 1, 1).bar([0, 1], [1, 2])
    chart = figure_chart(figure, "t")
    assert chart.png.startswith(b"\x89PNG") and "<svg" in chart.svg and chart.title == "t"


def test_lazy_charts_draw_once_when_read():
    calls = []

    def produce():
        calls.append(1)
        return {"a": Chart(b"", "", "A")}

    charts = LazyCharts(produce)
    charts["b"] = Chart(b"", "", "B")
    assert calls == []
    assert sorted(charts) == ["a", "b"] and charts["a"].title == "A" and len(charts) == 2
    assert calls == [1]
