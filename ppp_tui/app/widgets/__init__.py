"""The app's widgets: the pieces the screens are built of (the weight sliders, the flip
map and strip, the heat map, the runs table, a conversation), and the colours and
texts they share."""
